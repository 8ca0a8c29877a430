"""The floor of the guarded endpoint's cost: a bare FastAPI proxy (uvicorn, httpx), for benchmarks/guard_endpoint.py.

``POST /chat/completions`` forwards the JSON body to ``$BARE_UPSTREAM/chat/completions`` and answers the upstream's
JSON with one field added, as the guarded endpoint does, but with no API key, no rules, no check. With
``$BARE_EMBED`` = ``fp32`` or ``int8`` it first embeds the last message with norma's encoder in a worker thread, as the
guarded endpoint does before it can write the rules into the prompt. ``GET /v1/health`` answers when it is ready.

Run by the benchmark: ``python -m uvicorn _bare_proxy:app --app-dir benchmarks --port P``.
"""

from __future__ import annotations

import os
from typing import Any

import anyio.to_thread
import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from norma.embeddings import get_embedder

UPSTREAM = os.environ["BARE_UPSTREAM"]
ENCODER = os.environ.get("BARE_EMBED", "")

app = FastAPI()
client = httpx.AsyncClient(timeout=30)
embedder = get_embedder(quantize=ENCODER == "int8") if ENCODER else None
if embedder is not None:
    embedder.embed(["warm-up"])


@app.get("/v1/health")
async def health() -> dict[str, str]:
    return {"status": "ok"}


@app.post("/chat/completions")
async def chat(request: Request) -> JSONResponse:
    body: dict[str, Any] = await request.json()
    if embedder is not None:
        await anyio.to_thread.run_sync(embedder.embed, [body["messages"][-1]["content"]])
    response = await client.post(f"{UPSTREAM}/chat/completions", json=body)
    data = response.json()
    data["proxied"] = True
    return JSONResponse(data)
