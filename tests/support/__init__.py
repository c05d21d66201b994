"""Helpers shared by the unit, integration and end-to-end tests (``from support.x import y``).

Position builders for the rules tests live in tests/unit/helpers.py; what more than one suite
needs lives here: the event chain (`support.chain`), board geometry (`support.boards`), every
hosted game as a test parameter (`support.hosting`), a gateway served for a test
(`support.gateway`, `support.web_stack`) and whether a feed reader has begun to wait
(`support.reads`). Waiting with a deadline is `devkit.waiting`'s.
"""
