"""K1/K4: what a key may call, and who may hold which scope."""

from __future__ import annotations

import pytest

from dealroom.domain.scopes import ROOT_FIELD_SCOPES, Scope, key_may_call, parse_scopes


def test_k1_unlisted_fields_are_refused_to_every_key() -> None:
    every = frozenset(Scope)
    assert key_may_call("postMessage", every) is not None
    assert key_may_call("createApiKey", every) is not None
    assert key_may_call("offer", frozenset({Scope.OFFERS_READ})) is None
    assert key_may_call("offer", frozenset({Scope.WEBHOOKS_MANAGE})) is not None


def test_k1_every_listed_field_names_a_real_scope() -> None:
    assert {str(s) for s in ROOT_FIELD_SCOPES.values()} <= {str(s) for s in Scope}


def test_k4_operator_scopes_only_for_operators() -> None:
    with pytest.raises(ValueError, match="operators"):
        parse_scopes(["ops:read"], operator=False)
    assert parse_scopes(["ops:read", "offers:read"], operator=True) == {
        Scope.OPS_READ,
        Scope.OFFERS_READ,
    }
    with pytest.raises(ValueError, match="Unknown"):
        parse_scopes(["offers:write"], operator=True)
    with pytest.raises(ValueError, match="at least one"):
        parse_scopes([], operator=True)
