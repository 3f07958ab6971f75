"""The one write path: the apply step every change goes through, and last-used stamps written in the background."""
