"""Named plugins: network families and traversal backends, by name.

A layer offers a registry (`deep.networks.NETWORKS`, `sampling.SAMPLERS`);
modules above it register their entries into it when imported. So that a
solver can be asked for the network family "poker" without the caller importing the
module that defines it, and without the solver's layer importing a layer
above it, the built-in entries of higher layers are declared here by module
path, the way Python's entry points declare a distribution's plugins: the
first lookup of a declared name imports that module, which registers it.
This table is data, not an import: `tests/test_dependency_direction.py`
checks that no module of `openspiel_cfrx` imports a layer above its own.

Torch-free and imports nothing from `openspiel_cfrx`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

# (registry kind, name) -> the module whose import registers it.
BUILT_IN: dict[tuple[str, str], str] = {
    ("network", "poker"): "openspiel_cfrx.neural_poker.poker_network",
    ("network", "suit_symmetric_mlp"): "openspiel_cfrx.neural_poker.suit_symmetric",
    ("traversal backend", "poker"): "openspiel_cfrx.neural_poker.traversal",
}


class Registry(Generic[T]):
    """name -> entry, with the built-in entries of higher layers loaded on first lookup."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T) -> None:
        self._entries[name] = entry

    def register_all(self, entries: dict[str, T]) -> None:
        """Registers every name -> entry of `entries`, in order."""
        self._entries.update(entries)

    def names(self) -> list[str]:
        """Registered and declared names, in registration order then declaration order."""
        declared = [name for kind, name in BUILT_IN if kind == self.kind and name not in self._entries]
        return [*self._entries, *declared]

    def __contains__(self, name: object) -> bool:
        return name in self._entries or (self.kind, name) in BUILT_IN

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def get(self, name: str) -> T:
        """The entry of `name`; ValueError naming the choices when there is none."""
        if name not in self._entries and (self.kind, name) in BUILT_IN:
            importlib.import_module(BUILT_IN[self.kind, name])
        if name not in self._entries:
            raise ValueError(f"unknown {self.kind} {name!r}; choose from {', '.join(self.names())}")
        return self._entries[name]
