"""The fetcher and the extractor against a loopback server of fixture pages (loopback allowed
for the test, as DEALROOM_LINK_ALLOW_LOOPBACK=true allows it): what reads, what is unreadable
and why (L4), and every bound (redirects, bytes, time, types, encodings)."""

from __future__ import annotations

import pytest

from dealroom.domain.links import Reason
from dealroom.services.links.extract import Extracted, extract
from dealroom.services.links.fetch import USER_AGENT, FetchFailed, FetchPolicy, fetch
from tests.support.link_pages import BRIEF_TERMS, LATIN1_TEXT, LinkPages


def policy(**given: object) -> FetchPolicy:
    fields: dict[str, object] = {"allow_loopback": True, "ports": None} | given
    return FetchPolicy(**fields)  # type: ignore[arg-type]  # test overrides, checked at use


async def read(url: str, bounds: FetchPolicy | None = None) -> Extracted:
    page = await fetch(url, bounds or policy())
    return await extract(page, max_chars=20_000)


async def unreadable(url: str, bounds: FetchPolicy | None = None) -> FetchFailed:
    with pytest.raises(FetchFailed) as failed:
        await read(url, bounds)
    return failed.value


async def test_an_html_brief_reads_as_its_title_and_main_text(pages: LinkPages) -> None:
    found = await read(pages.url("/brief.html"))
    assert found.title == "Acme Spring Campaign Brief"
    assert BRIEF_TERMS in found.text
    assert "<p>" not in found.text


async def test_the_fetch_names_the_product_and_sends_no_cookies(pages: LinkPages) -> None:
    await read(pages.url("/brief.html"))
    headers = pages.headers["/brief.html"]
    assert headers["user-agent"] == USER_AGENT
    assert "cookie" not in headers
    assert "authorization" not in headers


async def test_a_pdf_deck_reads_as_its_text(pages: LinkPages) -> None:
    found = await read(pages.url("/deck.pdf"))
    assert BRIEF_TERMS in found.text
    assert found.title == "Acme Deck"


async def test_plain_text_and_gzipped_pages_read(pages: LinkPages) -> None:
    assert BRIEF_TERMS in (await read(pages.url("/note.txt"))).text
    assert BRIEF_TERMS in (await read(pages.url("/gzipped.html"))).text


async def test_pages_in_other_encodings_read_as_written(pages: LinkPages) -> None:
    assert LATIN1_TEXT in (await read(pages.url("/latin1.html"))).text
    assert "бюджет 6000" in (await read(pages.url("/meta-cp1251.html"))).text


async def test_one_redirect_is_followed_to_the_page(pages: LinkPages) -> None:
    page = await fetch(pages.url("/hop"), policy())
    assert page.final_url == pages.url("/brief.html")


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/login", Reason.LOGIN),
        ("/private", Reason.LOGIN),
        ("/nowhere", Reason.NOT_FOUND),
        ("/image.png", Reason.NOT_A_PAGE),
        ("/bad.pdf", Reason.NOT_A_PAGE),
        ("/empty.html", Reason.EMPTY),
    ],
)
async def test_unreadable_pages_say_why(pages: LinkPages, path: str, reason: Reason) -> None:
    assert (await unreadable(pages.url(path))).reason is reason


async def test_a_redirect_loop_stops_after_five_redirects(pages: LinkPages) -> None:
    failed = await unreadable(pages.url("/loop-a"))
    assert failed.reason is Reason.UNAVAILABLE
    assert failed.detail == "too many redirects"
    assert pages.hits["/loop-a"] + pages.hits["/loop-b"] == 6


@pytest.mark.parametrize("path", ["/to-metadata", "/to-private", "/to-mapped", "/to-ftp"])
async def test_every_redirect_is_checked_again(pages: LinkPages, path: str) -> None:
    failed = await unreadable(pages.url(path))
    assert failed.reason is Reason.REFUSED
    assert failed.final_url is not None
    assert not failed.final_url.startswith(pages.base_url)


async def test_a_port_not_allowed_is_refused(pages: LinkPages) -> None:
    failed = await unreadable(pages.url("/brief.html"), policy(ports=(80, 443)))
    assert failed.reason is Reason.REFUSED
    assert pages.hits["/brief.html"] == 0


@pytest.mark.parametrize("path", ["/declared-huge", "/huge.txt", "/bomb.html"])
async def test_a_body_past_the_byte_cap_is_too_large(pages: LinkPages, path: str) -> None:
    failed = await unreadable(pages.url(path))
    assert failed.reason is Reason.TOO_LARGE


async def test_the_byte_cap_counts_what_a_gzip_body_decompresses_to(pages: LinkPages) -> None:
    # About 62 KB on the wire, 64 MB inflated: stopped at the cap, never inflated in memory.
    failed = await unreadable(pages.url("/bomb.html"), policy(max_bytes=100_000))
    assert failed.reason is Reason.TOO_LARGE
    assert failed.detail == "over 100000 bytes"


async def test_a_slow_trickle_stops_at_the_deadline(pages: LinkPages) -> None:
    # The server would trickle for two minutes, each byte well within a read timeout.
    failed = await unreadable(pages.url("/trickle"), policy(total_seconds=1.0))
    assert failed.reason is Reason.UNAVAILABLE
    assert failed.detail == "timed out"
    assert failed.elapsed_ms < 10_000  # the deadline, not the server, ended it
