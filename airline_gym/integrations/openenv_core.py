"""openenv-core's names that the OpenEnv env and its server use, imported once behind one guard.

Needs the ``openenv`` extra; without it, importing either module is one
:class:`~airline_gym.errors.MissingDependencyError` naming it. (Importing
``openenv.core.env_server`` loads its FastAPI server anyway, so the env pays nothing more.)
"""

from __future__ import annotations

from airline_gym.errors import MissingDependencyError

try:
    from fastapi import Body, FastAPI, HTTPException, WebSocket
    from openenv.core.env_server import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        Action,
        Environment,
        Observation,
        State,
    )
    from openenv.core.env_server.exceptions import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        EnvironmentFactoryError,
        SessionCapacityError,
    )
    from openenv.core.env_server.http_server import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        HTTPEnvServer,
    )
    from openenv.core.env_server.serialization import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        deserialize_action,
        serialize_observation,
    )
    from openenv.core.env_server.types import (  # type: ignore[import-untyped,import-not-found,unused-ignore]
        ConcurrencyConfig,
        EnvironmentMetadata,
        ResetRequest,
        ResetResponse,
        WSErrorCode,
        WSErrorResponse,
        WSObservationResponse,
        WSStateResponse,
    )
    from pydantic import ValidationError
    from starlette.websockets import WebSocketDisconnect
except ImportError:  # pragma: no cover - exercised only without the extra
    raise MissingDependencyError(
        "airline-gym's OpenEnv environment and server", "openenv-core", "openenv"
    ) from None

__all__ = [
    "Action",
    "Body",
    "ConcurrencyConfig",
    "Environment",
    "EnvironmentFactoryError",
    "EnvironmentMetadata",
    "FastAPI",
    "HTTPEnvServer",
    "HTTPException",
    "Observation",
    "ResetRequest",
    "ResetResponse",
    "SessionCapacityError",
    "State",
    "ValidationError",
    "WSErrorCode",
    "WSErrorResponse",
    "WSObservationResponse",
    "WSStateResponse",
    "WebSocket",
    "WebSocketDisconnect",
    "deserialize_action",
    "serialize_observation",
]
