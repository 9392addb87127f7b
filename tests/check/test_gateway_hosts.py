"""A gateway member's host is one a resolver reads one way: an IPv4 address without leading
zeros (010 is 8 to some resolvers, 10 to others) and DNS labels of at most 63 characters."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from profilegen.model.gateway import Hostname

HOST: TypeAdapter[str] = TypeAdapter(Hostname)


@pytest.mark.parametrize(
    ("host", "message"),
    [
        ("010.0.0.1", "'010.0.0.1': an IPv4 address is written without leading zeros"),
        ("10.0.0.01", "'10.0.0.01': an IPv4 address is written without leading zeros"),
        ("a" * 64 + ".example", "has a label longer than 63 characters (DNS allows 63)"),
    ],
)
def test_an_ambiguous_host_is_refused(host: str, message: str) -> None:
    with pytest.raises(ValidationError) as refused:
        HOST.validate_python(host)
    assert message in str(refused.value)


@pytest.mark.parametrize("host", ["10.0.0.1", "0.0.0.0", "a" * 63 + ".example", "gpu-box.lan"])
def test_a_plain_host_passes(host: str) -> None:
    assert HOST.validate_python(host) == host
