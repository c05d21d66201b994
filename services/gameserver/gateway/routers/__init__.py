"""The gateway's routes, one `APIRouter` module per concern; ``gateway.wiring`` includes them.

A route only translates HTTP: it reads the request, calls one use case
(``gameserver.gateway.case_book``'s ``CasesDep``) or one read of the shared
``gameserver.gateway.dependencies`` (``GatewayDep``, ``Credentials``, ``GameId``), and answers
its result; a refusal is answered by its kind's status. A new group of endpoints is a new module
here with a ``router`` and one line in ``gameserver.gateway.wiring.ROUTERS``.
"""
