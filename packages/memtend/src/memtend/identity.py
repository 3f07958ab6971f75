"""Whose data a framework call reaches: one rule for every adapter, and the namespace templates that name a user.

An adapter reads the places its framework offers for the user (LangGraph's ``runtime.context``, then
``configurable.user_id``; LangChain's tool and middleware runtime; what a LlamaIndex object was built with) and
hands them here in that order. The first place holding a user gives it; a second place naming another user
refuses the call (:class:`~memtend.errors.UserMismatchError`, naming the places, never the ids); a call with no
user is refused (:class:`~memtend.errors.UserNotFoundError`) unless the adapter was given a default user.
No call falls back to another user. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memtend.errors import InvalidInputError, InvalidUserIdError, UserMismatchError, UserNotFoundError
from memtend.records import check_user_id

__all__ = [
    "SHARED_OWNER",
    "USER_PLACEHOLDER",
    "NamespaceTemplate",
    "Place",
    "as_prefixes",
    "as_templates",
    "field_of",
    "filled_namespace",
    "resolve_user",
    "starts_with",
    "user_in_places",
]

USER_PLACEHOLDER = "{user_id}"
SHARED_OWNER = "memtend:shared"  # the owner of documents an adapter declares shared (no one user's)

Place = tuple[str, object]  # (what the place is called in an error, what it holds; None = says nothing)


def field_of(container: object, name: str) -> object:
    """The value called ``name`` in a framework context: a mapping's key or an object's attribute; None if absent."""
    if container is None:
        return None
    if isinstance(container, Mapping):
        return container.get(name)
    return getattr(container, name, None)


def user_in_places(places: Iterable[Place], *, who: str) -> str | None:
    """The user the places name (checked by the core's user id rule), or None when none names one."""
    found: list[tuple[str, str]] = []
    for name, value in places:
        if value is None:
            continue
        try:
            user = check_user_id(value)
        except InvalidUserIdError as exc:
            raise InvalidUserIdError(f"{who}: {name} holds no valid user id ({exc})") from None
        found.append((name, user))
    disagreeing = [name for name, user in found if user != found[0][1]] if found else []
    if disagreeing:
        names = (found[0][0], *disagreeing)
        raise UserMismatchError(
            f"{who}: {' and '.join(dict.fromkeys(names))} name different users; a call is made for one user, "
            "so it is refused: give the same user id in each place (or name it in one place only)",
            tuple(dict.fromkeys(names)),
        )
    return found[0][1] if found else None


def resolve_user(places: Iterable[Place], *, who: str, fix: str, default: str | None = None) -> str:
    """The one user of a call: the first place holding one (every other place naming one must agree), else
    ``default`` (an adapter's declared single user), else :class:`~memtend.errors.UserNotFoundError` with ``fix``."""
    checked = list(places)
    user = user_in_places(checked, who=who)
    if user is not None:
        return user
    if default is not None:
        return check_user_id(default)
    read = ", ".join(name for name, _ in checked) or "no place"
    raise UserNotFoundError(f"{who} names no user (read: {read}); {fix}")


@dataclass(frozen=True)
class NamespaceTemplate:
    """A namespace layout naming its user, as LangMem writes them: ``("memories", "{user_id}")``.

    A label ``"{user_id}"`` is the user; any other ``"{name}"`` label matches any one label; every other label must
    be equal. A namespace matches when it starts with the template's labels (it may be longer).
    """

    labels: tuple[str, ...]

    @classmethod
    def parse(cls, template: object) -> NamespaceTemplate:
        if isinstance(template, NamespaceTemplate):
            return template
        if isinstance(template, str) or not isinstance(template, Sequence):
            raise InvalidInputError(
                "a namespace template is a tuple of labels with one '{user_id}', e.g. ('memories', '{user_id}')"
            )
        labels = tuple(template)
        if not all(isinstance(label, str) and label for label in labels):
            raise InvalidInputError("a namespace template's labels are non-empty strings")
        if labels.count(USER_PLACEHOLDER) != 1:
            raise InvalidInputError(
                "a namespace template names its user once: put exactly one '{user_id}' label in it, "
                "e.g. ('memories', '{user_id}')"
            )
        return cls(labels)

    @property
    def user_position(self) -> int:
        return self.labels.index(USER_PLACEHOLDER)

    def user_of(self, namespace: Sequence[str]) -> str | None:
        """The user a namespace (or a search prefix reaching the user label) names by this template, or None."""
        position = self.user_position
        if len(namespace) <= position:
            return None
        for label, wanted in zip(namespace, self.labels, strict=False):
            if not _placeholder(wanted) and label != wanted:
                return None
        return namespace[position] or None

    def fill(self, user_id: str) -> tuple[str, ...]:
        """The template with the user filled in (other placeholders left as they are)."""
        return tuple(user_id if label == USER_PLACEHOLDER else label for label in self.labels)

    def describe(self) -> str:
        return repr(self.labels)


def _placeholder(label: str) -> bool:
    return len(label) > 2 and label.startswith("{") and label.endswith("}")


def filled_namespace(namespace: Sequence[str], user_id: str | None, *, who: str) -> tuple[str, ...]:
    """A namespace whose ``"{user_id}"`` labels are filled with the run's user (refused when the run has none)."""
    if USER_PLACEHOLDER not in namespace:
        return tuple(namespace)
    if user_id is None:
        raise UserNotFoundError(
            f"{who}: the namespace holds '{{user_id}}' to be filled from the run, and no user is known here: "
            "run it inside a graph invoked with context={'user_id': ...} (or configurable.user_id), or name the user"
        )
    return tuple(user_id if label == USER_PLACEHOLDER else label for label in namespace)


def as_templates(templates: Iterable[object]) -> tuple[NamespaceTemplate, ...]:
    parsed = tuple(NamespaceTemplate.parse(t) for t in templates)
    if not parsed:
        raise InvalidInputError("give at least one namespace template, e.g. [('memories', '{user_id}')]")
    return parsed


def as_prefixes(prefixes: Iterable[object], what: str) -> tuple[tuple[str, ...], ...]:
    out: list[tuple[str, ...]] = []
    for prefix in prefixes:
        if isinstance(prefix, str) or not isinstance(prefix, Sequence) or not prefix:
            raise InvalidInputError(f"{what} takes namespace prefixes (non-empty tuples of labels), e.g. [('app',)]")
        labels = tuple(prefix)
        if not all(isinstance(label, str) and label for label in labels):
            raise InvalidInputError(f"{what}: a prefix's labels are non-empty strings")
        out.append(labels)
    return tuple(out)


def starts_with(namespace: Sequence[str], prefix: Sequence[str]) -> bool:
    return len(namespace) >= len(prefix) and tuple(namespace[: len(prefix)]) == tuple(prefix)
