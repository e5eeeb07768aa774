"""Links: what a pasted URL says, read once and kept on the message that held it.

This package owns the address guard every outbound fetch to a URL someone else chose goes
through (links and partner webhooks: resolve once, refuse non-public addresses, connect to the
address checked), the fetcher (redirects re-checked, bytes, time and types capped, no cookies),
the extraction of a page's title and text (trafilatura for HTML, pypdf for PDF) and the
perception of a message's links (the Gemini URL Context reader, fail-closed, with the fetch as
its fallback; the room's cache; the records). The rules themselves are ``domain/links.py``.
"""
