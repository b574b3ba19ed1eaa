"""End to end: an engine's spans reach Arize Phoenix over OTLP, and are read back through Phoenix's client.

Starts ``phoenix serve`` on free ports with a fresh working folder, runs a miss then a hit with
``Engine(telemetry=True)`` exporting to it, and checks each span Phoenix returns: the run spans'
outcome, template, steps replayed and tokens saved, and the hit's replayed steps as its children.
Needs ``pip install arize-phoenix opentelemetry-sdk opentelemetry-exporter-otlp-proto-http`` (``make
phoenix`` sets up ``.venv-phoenix`` and runs it); exits 1, saying why, when a check fails.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from phoenix.client import Client

from muscle_mem import Engine, current_run

PROJECT = "muscle-mem-e2e"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Phoenix, started on free ports; its base URL once it answers."""
    port, grpc = free_port(), free_port()
    env = dict(
        os.environ, PHOENIX_WORKING_DIR=str(folder), PHOENIX_PORT=str(port), PHOENIX_GRPC_PORT=str(grpc)
    )
    phoenix = Path(sys.executable).with_name("phoenix")
    log = (folder / "phoenix.log").open("wb")
    server = subprocess.Popen([str(phoenix), "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return server, url
        except OSError:
            time.sleep(0.5)
    server.terminate()
    raise SystemExit(f"phoenix did not start in 120 s; see {folder / 'phoenix.log'}")


def run_engine(url: str) -> None:
    """A miss, then a hit, exported to Phoenix over OTLP/HTTP."""
    provider = TracerProvider(resource=Resource.create({"openinference.project.name": PROJECT}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=url + "/v1/traces")))
    trace.set_tracer_provider(provider)
    engine = Engine(telemetry=True)

    @engine.tool()
    def lookup(email: str) -> str:
        return "usr_" + email.split("@")[0]

    @engine.tool()
    def open_ticket(user: str) -> str:
        return f"ticket for {user}"

    def agent(task: str) -> str:
        ticket = open_ticket(lookup(task.split()[-1]))
        run = current_run()
        assert run is not None
        run.add_usage(410, 52, requests=3, model="gpt-4.1")
        return ticket

    engine.set_agent(agent)
    with trace.get_tracer("e2e").start_as_current_span("agent run"):
        assert not engine("open a ticket for ada@x.io", params={"email": "ada@x.io"}).hit
    with trace.get_tracer("e2e").start_as_current_span("agent run"):
        assert engine("open a ticket for bob@x.io", params={"email": "bob@x.io"}).hit
    provider.shutdown()


def spans_of(client: Client) -> list[Any]:
    """The project's spans, once Phoenix has ingested the six sent (two runs, two steps, two parents)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            found = client.spans.get_spans(project_identifier=PROJECT, limit=100)
        except Exception:
            found = []
        if len(found) >= 6 or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def check(spans: list[Any]) -> list[str]:
    """What is wrong with the spans Phoenix returned (nothing, when all is as sent)."""
    runs = [s for s in spans if s["name"] == "muscle_mem.run"]
    steps = [s for s in spans if s["name"] == "muscle_mem.step"]
    parents = {s["context"]["span_id"] for s in spans if s["name"] == "agent run"}
    problems = []
    outcomes = sorted(s["attributes"].get("muscle_mem.outcome") for s in runs)
    if outcomes != ["hit", "miss"]:
        problems.append(f"run outcomes {outcomes}, not a hit and a miss")
    for span in runs:
        attributes = span["attributes"]
        if attributes.get("muscle_mem.template") != "open a ticket for {email}":
            problems.append(f"template {attributes.get('muscle_mem.template')!r}")
        if span.get("parent_id") not in parents:
            problems.append("a run span is not a child of the agent's span")
        if attributes.get("muscle_mem.outcome") == "hit":
            if (
                attributes.get("muscle_mem.tokens_saved") != 462
                or attributes.get("muscle_mem.steps_replayed") != 2
            ):
                problems.append(f"hit attributes {attributes}")
            hit_id = span["context"]["span_id"]
            tools = sorted(
                s["attributes"].get("gen_ai.tool.name") for s in steps if s.get("parent_id") == hit_id
            )
            if tools != ["lookup", "open_ticket"]:
                problems.append(f"the hit's step spans name {tools}")
        elif (
            attributes.get("gen_ai.usage.input_tokens") != 410
            or attributes.get("gen_ai.request.model") != "gpt-4.1"
        ):
            problems.append(f"miss attributes {attributes}")
    return problems


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="phoenix-") as folder:
        server, url = serve(Path(folder))
        try:
            run_engine(url)
            spans = spans_of(Client(base_url=url))
        finally:
            server.terminate()
            server.wait(timeout=30)
    problems = check(spans)
    for span in spans:
        print(
            span["name"],
            {k: v for k, v in span["attributes"].items() if k.startswith(("muscle_mem.", "gen_ai."))},
        )
    if problems:
        print("FAILED:", *problems, sep="\n  ")
        return 1
    print(f"ok: {len(spans)} spans read back from Phoenix")
    return 0


if __name__ == "__main__":
    sys.exit(main())
