"""Identities, the task-w1-1 bug and the MCP-proxy-like refund: replay what is safe, stop what is not."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Front, Run, Scenario, Step, Tool
from .kit import done, num, out, word

# ---- identities: recorded for one user, the next user's lookup returns another id -------------------------


def lookup_user(w: dict[str, Any], email: str) -> dict[str, Any]:
    return {"id": w["users"][email], "email": email}


def reset_password(w: dict[str, Any], user_id: str) -> str:
    w["resets"].append(user_id)
    return f"password of {user_id} reset"


USER_TOOLS = [
    Tool("lookup_user", lookup_user, check=lambda w, email: email in w["users"]),
    Tool("reset_password", reset_password, check=lambda w, user_id: w["mailer"]),
]


def reset_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    email = word(text, "of")
    if not done(h, "lookup_user"):
        return Call("lookup_user", {"email": email})
    uid = out(h, "lookup_user")["id"]
    if not done(h, "reset_password"):
        return Call("reset_password", {"user_id": uid})
    return Answer(f"Reset the password of {uid}.")


def users() -> dict[str, Any]:
    ids = {"ada@x.io": "usr_41", "bob@x.io": "usr_42", "cy@x.io": "usr_77"}
    return {"users": ids, "resets": [], "mailer": "smtp"}


def _reset(email: str) -> Run:
    return Run(f"reset the password of {email}", users(), {"email": email}, harmless=True)


def open_ticket(w: dict[str, Any], topic: str) -> dict[str, Any]:
    tid = f"T{w['next']}"
    w["next"] += 1
    w["tickets"].append(tid)
    return {"ticket": tid, "topic": topic}


def assign(w: dict[str, Any], ticket: str, team: str) -> str:
    w["assigned"].append((ticket, team))
    return "assigned"


TICKET_TOOLS = [
    Tool("open_ticket", open_ticket, check=lambda w, topic: True),
    Tool("assign", assign, check=lambda w, ticket, team: w["queue_open"]),
]


def ticket_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    topic = word(text, "about")
    if not done(h, "open_ticket"):
        return Call("open_ticket", {"topic": topic})
    tid = out(h, "open_ticket")["ticket"]
    if not done(h, "assign"):
        return Call("assign", {"ticket": tid, "team": "support"})
    return Answer(f"Opened {tid}.")


def _ticket(topic: str, next_id: int) -> Run:
    world = {"next": next_id, "tickets": [], "assigned": [], "queue_open": True}
    return Run(f"open a ticket about {topic}", world, {"topic": topic}, harmless=True)


def home_of(w: dict[str, Any], user: str) -> dict[str, Any]:
    return {"user": user, "path": w["homes"][user]}


def backup(w: dict[str, Any], path: str) -> str:
    w["backups"].append(path)
    return "backed up"


HOME_TOOLS = [
    Tool("home_of", home_of, check=lambda w, user: user in w["homes"]),
    Tool("backup", backup, check=lambda w, path: w["disk_ok"]),
]


def backup_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    user = word(text, "of")
    if not done(h, "home_of"):
        return Call("home_of", {"user": user})
    path = out(h, "home_of")["path"]
    if not done(h, "backup"):
        return Call("backup", {"path": path})
    return Answer(f"Backed up {path}.")


def _backup(user: str) -> Run:
    world = {"homes": {"ada": "/srv/home/ada-01", "bob": "/mnt/users/b/bob"}, "backups": [], "disk_ok": True}
    return Run(f"back up the home of {user}", world, {"user": user}, harmless=True)


# ---- the task-w1-1 bug: an int output and the same number in the task text agree -------------------------


def next_job(w: dict[str, Any]) -> int:
    return int(w["job"])


def run_job(w: dict[str, Any], job: int) -> str:
    w["ran"].append(job)
    return f"ran {job}"


JOB_TOOLS = [
    Tool("next_job", next_job, check=lambda w: True),
    Tool("run_job", run_job, check=lambda w, job: w["runner_up"]),
]


def job_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "next_job"):
        return Call("next_job")
    job = out(h, "next_job")
    if not done(h, "run_job"):
        return Call("run_job", {"job": job})
    return Answer(f"{text}: ran job {job}.")


def _job(task: str, job: int) -> Run:
    return Run(task, {"job": job, "ran": [], "runner_up": True}, harmless=True)


W1_RUNS = [
    _job(f"task-w{w}-{k}", job) for w, k, job in [(1, 1, 1), (1, 2, 2), (1, 3, 3), (2, 1, 2), (2, 3, 1)]
]

# ---- the MCP-proxy-like case: look the order up, refund it; now it says "refunded" ------------------------


def lookup_order(w: dict[str, Any], order_id: int) -> dict[str, Any]:
    o = w["orders"][order_id]
    return {"order_id": order_id, "status": o["status"], "amount": o["amount"]}


def refund_order(w: dict[str, Any], order_id: int, amount: int) -> str:
    w["refunds"].append((order_id, amount))
    w["orders"][order_id]["status"] = "refunded"
    return "refunded"


MCP_TOOLS = [
    Tool("lookup_order", lookup_order, check=lambda w, order_id: order_id in w["orders"]),
    Tool("refund_order", refund_order, check=lambda w, order_id, amount: order_id in w["orders"]),
]


def mcp_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    oid = num(text, "order")
    if not done(h, "lookup_order"):
        return Call("lookup_order", {"order_id": oid})
    order = out(h, "lookup_order")
    if order["status"] != "delivered":
        return Answer(f"Order {oid} is {order['status']}: nothing to refund.")
    if not done(h, "refund_order"):
        return Call("refund_order", {"order_id": oid, "amount": order["amount"]})
    return Answer(f"Refunded order {oid}.")


def shop() -> dict[str, Any]:
    orders = {
        1001: {"status": "delivered", "amount": 30},
        1002: {"status": "delivered", "amount": 30},
        1003: {"status": "refunded", "amount": 30},
    }
    return {"orders": orders, "refunds": []}


def _refund(oid: int) -> Run:
    return Run(f"refund order {oid}", shop(), {"order_id": oid})


def _sc(
    name: str,
    cls: str,
    front: Front,
    tools: list[Tool],
    policy: Any,
    records: list[Run],
    probes: list[Run],
    doc: str,
    **kw: Any,
) -> Scenario:
    return Scenario(name, cls, front, tools, policy, records, probes, doc=doc, **kw)


def reset_human_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    email = word(text, "of")
    if not done(h, "lookup_user"):
        return Call("lookup_user", {"email": email})
    uid = out(h, "lookup_user")["id"]
    if uid.startswith("svc_"):
        return Answer(f"{uid} is a service account: rotate its key instead.")
    if not done(h, "reset_password"):
        return Call("reset_password", {"user_id": uid})
    return Answer(f"Reset the password of {uid}.")


def service_users() -> dict[str, Any]:
    return users() | {"users": {"ada@x.io": "usr_41", "ci@x.io": "svc_9"}}


SCENARIOS = [
    _sc(
        "identity_user_id_core",
        "identities",
        "core",
        USER_TOOLS,
        reset_policy,
        [_reset("ada@x.io")],
        [_reset("bob@x.io"), _reset("cy@x.io")],
        "Recorded for ada; bob's lookup returns another id, which only flows on: should replay.",
    ),
    _sc(
        "identity_user_id_langchain",
        "identities",
        "langchain",
        USER_TOOLS,
        reset_policy,
        [_reset("ada@x.io")],
        [_reset("bob@x.io")],
        "The identity case through LangChain.",
    ),
    _sc(
        "identity_user_id_pydantic_ai",
        "identities",
        "pydantic_ai",
        USER_TOOLS,
        reset_policy,
        [_reset("ada@x.io")],
        [_reset("cy@x.io")],
        "The identity case through pydantic-ai.",
    ),
    _sc(
        "identity_created_ticket_core",
        "identities",
        "core",
        TICKET_TOOLS,
        ticket_policy,
        [_ticket("login", 1)],
        [_ticket("login", 7)],
        "A ticket id created by this run's own write flows on: should replay.",
    ),
    _sc(
        "identity_home_path_core",
        "identities",
        "core",
        HOME_TOOLS,
        backup_policy,
        [_backup("ada")],
        [_backup("bob")],
        "A path a read returned (another shape for the next user) only flows on: should replay.",
        store="sqlite",
    ),
    _sc(
        "task_w1_1_int_output_core",
        "task_w1_1",
        "core",
        JOB_TOOLS,
        job_policy,
        W1_RUNS,
        W1_RUNS,
        "Tasks named task-w1-1 whose tool returns 1, 2, 3: every task should replay (another worker).",
        store="sqlite",
        restart=True,
    ),
    _sc(
        "task_w1_1_int_output_memory_core",
        "task_w1_1",
        "core",
        JOB_TOOLS,
        job_policy,
        W1_RUNS,
        W1_RUNS,
        "The same on the in-memory store.",
    ),
    _sc(
        "mcp_refund_twice_core",
        "mcp_proxy",
        "core",
        MCP_TOOLS,
        mcp_policy,
        [_refund(1001)],
        [_refund(1003), _refund(1002)],
        "Recorded for 1001 (look up, refund); 1003's lookup says refunded: must not refund twice.",
    ),
    _sc(
        "mcp_refund_twice_langchain",
        "mcp_proxy",
        "langchain",
        MCP_TOOLS,
        mcp_policy,
        [_refund(1001)],
        [_refund(1003)],
        "The refund-twice case through LangChain.",
    ),
    _sc(
        "identity_prefix_steers_core",
        "identities",
        "core",
        USER_TOOLS,
        reset_human_policy,
        [Run("reset the password of ada@x.io", service_users(), {"email": "ada@x.io"})],
        [Run("reset the password of ci@x.io", service_users(), {"email": "ci@x.io"})],
        "An id that flows on as a copy but whose kind (a service account) steers the agent.",
    ),
    _sc(
        "mcp_refund_twice_proxy",
        "mcp_proxy",
        "mcp_proxy",
        MCP_TOOLS,
        mcp_policy,
        [_refund(1001)],
        [_refund(1003), _refund(1002)],
        "The refund case through muscle-mem's MCP caching proxy: look up 1001, refund; 1003 is refunded.",
    ),
    _sc(
        "identity_user_id_proxy",
        "identities",
        "mcp_proxy",
        USER_TOOLS,
        reset_policy,
        [_reset("ada@x.io")],
        [_reset("bob@x.io")],
        "The identity case through the MCP proxy: should replay.",
    ),
]
