"""The address guard (domain/links.py L1-L3): every private, loopback, link-local (metadata),
reserved spelling is refused with loopback not allowed, before any connection; the fetch
connects to the address it checked (one lookup: no DNS rebinding), for links and webhooks."""

from __future__ import annotations

import ipaddress
import uuid

import httpx
import pytest

from dealroom.config import Settings
from dealroom.domain import links as rules
from dealroom.domain.links import Reason, Refused
from dealroom.jobs.webhook_delivery import Claim, WebhookWorker
from dealroom.realtime.broker import InProcessBroker
from dealroom.services.links.fetch import FetchFailed, FetchPolicy, fetch
from dealroom.services.links.guard import pin
from tests.services.links.conftest import FakeDns
from tests.support.clock import ManualClock
from tests.support.link_pages import BRIEF_TERMS, LinkPages
from tests.support.receiver import receiver

SECRET = "whsec_" + "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo="

REFUSED_HOSTS = [
    "127.0.0.1",
    "127.0.0.2",
    "2130706433",  # decimal 127.0.0.1
    "0177.0.0.1",  # octal
    "0x7f.0.0.1",  # hex
    "0x7f000001",
    "127.1",  # short form
    "017700000001",  # octal, one part
    "[::1]",
    "[::ffff:127.0.0.1]",  # IPv4-mapped
    "[::ffff:7f00:1]",
    "[::127.0.0.1]",  # IPv4-compatible
    "169.254.169.254",  # cloud metadata
    "2852039166",  # decimal 169.254.169.254
    "0251.0376.0251.0376",  # octal 169.254.169.254
    "[::ffff:169.254.169.254]",
    "[::ffff:a9fe:a9fe]",
    "[64:ff9b::a9fe:a9fe]",  # NAT64 of the metadata address
    "[2002:a9fe:a9fe::]",  # 6to4 of the metadata address
    "[fd00:ec2::254]",  # AWS's IPv6 metadata address
    "[fe80::1]",
    "10.0.0.1",
    "0xa.0.0.1",
    "172.16.0.1",
    "192.168.1.1",
    "100.64.0.1",  # shared (CGNAT)
    "0.0.0.0",
    "0",
    "[::]",
    "224.0.0.1",
    "[ff02::1]",
    "240.0.0.1",  # reserved
    "255.255.255.255",
    "192.0.2.1",  # documentation
    "[2001:db8::1]",
    "localhost",  # a name resolving to loopback
]


@pytest.mark.parametrize("host", REFUSED_HOSTS)
async def test_the_guard_refuses_every_private_form_with_loopback_not_allowed(host: str) -> None:
    with pytest.raises(Refused):
        await pin(f"http://{host}/brief", allow_loopback=False, ports=None)


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/brief",
        "file:///etc/passwd",
        "http://user:secret@example.com/",
        "http://example.com:8080/",
        "http://example.com:99999/",
        "http://[::1/",
        "javascript:alert(1)",
    ],
)
async def test_the_guard_refuses_other_schemes_ports_and_credentials(url: str) -> None:
    with pytest.raises(Refused):
        await pin(url, allow_loopback=True, ports=(80, 443))


async def test_a_name_resolving_to_a_private_address_is_refused(dns: FakeDns) -> None:
    dns.answers["brief.example"] = ["10.1.2.3"]
    with pytest.raises(Refused, match="private"):
        await pin("https://brief.example/q3.pdf", allow_loopback=False, ports=(443,))
    dns.answers["mixed.example"] = ["93.184.216.34,169.254.169.254"]
    with pytest.raises(Refused, match="link-local"):
        await pin("https://mixed.example/", allow_loopback=False, ports=(443,))


async def test_a_public_name_is_pinned_to_the_address_checked(dns: FakeDns) -> None:
    dns.answers["brief.example"] = ["93.184.216.34"]
    pinned = await pin("https://brief.example/a?b=1", allow_loopback=False, ports=(443,))
    assert pinned.address == ipaddress.ip_address("93.184.216.34")
    assert pinned.connect_url == "https://93.184.216.34/a?b=1"
    assert pinned.headers() == {"Host": "brief.example"}
    assert pinned.extensions == {"sni_hostname": "brief.example"}


def test_ipv4_literals_in_every_spelling_name_the_address_resolvers_do() -> None:
    loopback = ipaddress.IPv4Address("127.0.0.1")
    for spelling in ("2130706433", "0177.0.0.1", "0x7f.0.0.1", "127.1", "0x7f.0.1", "127.0.0.1."):
        assert rules.parse_ipv4_literal(spelling) == loopback, spelling
    assert rules.parse_ipv4_literal("example.com") is None
    assert rules.parse_ipv4_literal("256.0.0.1") is None
    assert rules.parse_ipv4_literal("08.0.0.1") is None  # 8 is no octal digit


async def test_the_fetch_connects_to_the_address_it_checked_one_lookup(
    pages: LinkPages, dns: FakeDns
) -> None:
    # DNS rebinding: the name answers loopback (allowed here) for the check, then an address
    # where nothing answers. One lookup, and the page is read from the address checked.
    dns.answers["rebind.example"] = ["127.0.0.1", "10.255.255.1"]
    url = f"http://rebind.example:{pages.port}/brief.html"
    policy = FetchPolicy(allow_loopback=True, ports=None, total_seconds=3)
    page = await fetch(url, policy)
    assert BRIEF_TERMS.encode() in page.body
    assert dns.lookups["rebind.example"] == 1
    assert pages.headers["/brief.html"]["host"] == f"rebind.example:{pages.port}"


async def test_loopback_is_refused_unless_allowed(pages: LinkPages) -> None:
    with pytest.raises(FetchFailed) as failed:
        await fetch(pages.url("/brief.html"), FetchPolicy(allow_loopback=False, ports=None))
    assert failed.value.reason is Reason.REFUSED
    assert pages.hits["/brief.html"] == 0


def _worker() -> WebhookWorker:
    settings = Settings(webhook_allow_loopback=True, webhook_timeout_seconds=3)
    # attempt() sends one claim and opens no session: no sessionmaker is needed.
    return WebhookWorker(settings, None, InProcessBroker(), ManualClock())  # type: ignore[arg-type]


def _claim(url: str) -> Claim:
    return Claim(uuid.uuid4(), uuid.uuid4(), 1, "msg_1", "offer.created", url, SECRET, '{"a":1}')


async def test_the_webhook_sender_posts_to_the_address_it_checked(dns: FakeDns) -> None:
    async with receiver() as partner:
        port = int(partner.url.rsplit(":", 1)[1].split("/", 1)[0])
        dns.answers["partner.example"] = ["127.0.0.1", "10.255.255.1"]
        async with httpx.AsyncClient(trust_env=False) as http:
            outcome = await _worker().attempt(http, _claim(f"http://partner.example:{port}/hook"))
    assert outcome.error is None, outcome.error
    assert outcome.status_code == 200
    assert dns.lookups["partner.example"] == 1
    assert partner.requests[0].headers["host"] == f"partner.example:{port}"


async def test_the_webhook_sender_refuses_the_metadata_address(dns: FakeDns) -> None:
    dns.answers["evil.example"] = ["169.254.169.254"]
    async with httpx.AsyncClient(trust_env=False) as http:
        outcome = await _worker().attempt(http, _claim("http://evil.example/hook"))
    assert outcome.status_code is None
    assert outcome.error is not None
    assert outcome.error.startswith("refused destination")
