"""Write gate: refuse secrets and sensitive data, and flag text that tries to steer the agent. Pure: no storage.

Every write passes through :func:`check_write`:

* :func:`find_sensitive` looks for secrets (cloud and SaaS keys and tokens, JWTs, private key blocks,
  passwords given as values, connection strings with a password) and sensitive personal data (payment
  cards that pass Luhn, IBANs that pass mod-97, US social security numbers, a few other national ids).
  The token formats kept by ``detect-secrets`` are used through its plugin classes; what it lacks
  (checksummed numbers, password phrases, newer key formats) is written here. The detectors read a normal
  form of the text (``normalise``: NFKC, invisible characters dropped, digits of any script as ASCII) and
  their spans are mapped back, so a finding always names the original characters.
* :func:`looks_like_injection` flags text that reads like an instruction to the AI agent rather than to a
  person (prompt injection), by patterns, and for external text also by an :class:`InjectionCheck` when one is
  given (``Memory`` passes the installed ``memtend-injection`` classifier). Flagged text is still stored; text
  from an external source always waits for review.

A :class:`Finding` holds a kind and a span, never the value, so findings and errors can be logged. Kinds:
``card iban ssn national_id password pin connection_string private_key jwt secret aws_access_key aws_secret_key
openai_key anthropic_key github_token github_pat gitlab_token slack_token stripe_key google_api_key google_oauth
sendgrid_key pypi_token npm_token huggingface_token discord_token telegram_token mailchimp_key azure_storage_key
square_oauth twilio_key artifactory_token``.

Extension points: a :class:`GatePolicy` adds custom detectors (``text -> findings``) and an :class:`AllowList`
of values that are not secrets; pass it as ``policy=`` to :func:`check_write`, :func:`find_sensitive` and
:func:`redact`.

Modules, by detector family: ``tokens`` (keys and tokens, private keys, secret assignments), ``numbers``
(cards, IBANs, national ids), ``passwords`` (keyword phrasings in several languages), ``credentials`` (URLs
with a password, Basic headers, command-line flags, user / password pairs), ``injection``; ``normalise`` gives
the form they read, ``sensitive`` runs and merges them, ``policy`` holds the extension points and ``decision``
the gate itself.
"""

from memtend.policies.gate.common import Finding
from memtend.policies.gate.decision import GateDecision, check_write
from memtend.policies.gate.injection import InjectionCheck, looks_like_injection
from memtend.policies.gate.json_values import json_lines, redact_json
from memtend.policies.gate.numbers import iban_valid, luhn_valid
from memtend.policies.gate.policy import AllowList, Detector, GatePolicy
from memtend.policies.gate.sensitive import find_sensitive, redact

__all__ = [
    "AllowList",
    "Detector",
    "Finding",
    "GateDecision",
    "GatePolicy",
    "InjectionCheck",
    "check_write",
    "find_sensitive",
    "iban_valid",
    "json_lines",
    "looks_like_injection",
    "luhn_valid",
    "redact",
    "redact_json",
]
