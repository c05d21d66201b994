"""The gateway's routes, one `APIRouter` module per concern; ``create_app`` includes them.

A new group of endpoints is a new module here with a ``router`` and one ``include_router`` line
in ``renature_services.gateway.app``. Routes take the shared dependencies of
``renature_services.gateway.dependencies`` (``GatewayDep``, ``Credentials``, ``GameId``).
"""
