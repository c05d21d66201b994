"""The gateway's routes, one `APIRouter` module per concern; ``create_app`` includes them.

A new group of endpoints is a new module here with a ``router`` and one ``include_router`` line
in ``gameserver.gateway.app``. Routes take the shared dependencies of
``gameserver.gateway.dependencies`` (``GatewayDep``, ``Credentials``, ``GameId``).
"""
