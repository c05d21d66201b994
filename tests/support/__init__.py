"""Helpers shared by the unit, integration and end-to-end tests (``from support.x import y``).

Position builders for the rules tests live in tests/unit/helpers.py; what more than one suite
needs lives here: the event chain (`support.chain`), board geometry (`support.boards`) and
waiting with a deadline (`support.waiting`).
"""
