"""Names and identifier-shaped texts whose content steers the agent (compared to a constant, parsed)."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Run, Step, Tool
from .kit import done, num, out, sc, word

# ---- 1. reset a password unless the account is root (username compared to a constant) ----------------


def get_account(w: dict[str, Any], account_id: int) -> dict[str, Any]:
    return {"account_id": account_id, "username": w["accounts"][account_id]}


def reset_password(w: dict[str, Any], username: str) -> str:
    w["resets"].append(username)
    return "reset link sent"


def flag_security(w: dict[str, Any], account_id: int) -> str:
    w["flags"].append(account_id)
    return "flagged"


ROOT_TOOLS = [
    Tool("get_account", get_account, check=lambda w, account_id: account_id in w["accounts"]),
    Tool("reset_password", reset_password, check=lambda w, username: True),
    Tool("flag_security", flag_security, check=lambda w, account_id: True),
]


def root_policy(text: str, ctx: str, h: list[Step]):
    aid = num(text, "account")
    if not done(h, "get_account"):
        return Call("get_account", {"account_id": aid})
    user = out(h, "get_account")["username"]
    if user == "root":
        if not done(h, "flag_security"):
            return Call("flag_security", {"account_id": aid})
        return Answer("Refused: root's password is never reset by chat.")
    if not done(h, "reset_password"):
        return Call("reset_password", {"username": user})
    return Answer("Sent a reset link.")


def _root(aid: int, user: str) -> Run:
    return Run(
        f"reset the password of account {aid}",
        {"accounts": {aid: user}, "resets": [], "flags": []},
        {"account_id": aid},
    )


# ---- 2. grant access only to an internal email domain -----------------------------------------------------


def get_request(w: dict[str, Any], request_id: int) -> dict[str, Any]:
    return {"request_id": request_id, "requester_email": w["requester"], "resource": "wiki"}


def grant(w: dict[str, Any], email: str, resource: str) -> str:
    w["granted"].append((email, resource))
    return "granted"


def deny_request(w: dict[str, Any], request_id: int) -> str:
    w["denied"].append(request_id)
    return "denied"


DOMAIN_TOOLS = [
    Tool("get_request", get_request, check=lambda w, request_id: True),
    Tool("grant", grant, check=lambda w, email, resource: True),
    Tool("deny_request", deny_request, check=lambda w, request_id: True),
]


def domain_policy(text: str, ctx: str, h: list[Step]):
    rid = num(text, "request")
    if not done(h, "get_request"):
        return Call("get_request", {"request_id": rid})
    r = out(h, "get_request")
    if r["requester_email"].endswith("@corp.io"):
        if not done(h, "grant"):
            return Call("grant", {"email": r["requester_email"], "resource": r["resource"]})
        return Answer("Access granted.")
    if not done(h, "deny_request"):
        return Call("deny_request", {"request_id": rid})
    return Answer("Denied: external requester.")


def _req(rid: int, email: str) -> Run:
    return Run(
        f"handle access request {rid}",
        {"requester": email, "granted": [], "denied": []},
        {"request_id": rid},
    )


# ---- 3. consent needed for an EU country code ---------------------------------------------------------------

EU = {"DE", "FR", "IT", "ES", "NL"}


def get_customer(w: dict[str, Any], customer_id: int) -> dict[str, Any]:
    return {"customer_id": customer_id, "country_code": w["country"], "tier": "basic"}


def request_consent(w: dict[str, Any], customer_id: int) -> str:
    w["consent"].append(customer_id)
    return "consent requested"


def enable_tracking(w: dict[str, Any], customer_id: int) -> str:
    w["tracking"].append(customer_id)
    return "tracking on"


COUNTRY_TOOLS = [
    Tool("get_customer", get_customer, check=lambda w, customer_id: True),
    Tool("request_consent", request_consent, check=lambda w, customer_id: True),
    Tool("enable_tracking", enable_tracking, check=lambda w, customer_id: True),
]


def country_policy(text: str, ctx: str, h: list[Step]):
    cid = num(text, "customer")
    if not done(h, "get_customer"):
        return Call("get_customer", {"customer_id": cid})
    if out(h, "get_customer")["country_code"] in EU:
        if not done(h, "request_consent"):
            return Call("request_consent", {"customer_id": cid})
        return Answer("Asked for consent first.")
    if not done(h, "enable_tracking"):
        return Call("enable_tracking", {"customer_id": cid})
    return Answer("Tracking enabled.")


def _cust(cid: int, country: str) -> Run:
    return Run(
        f"set up analytics for customer {cid}",
        {"country": country, "consent": [], "tracking": []},
        {"customer_id": cid},
    )


# ---- 4. export only on a paid plan (plan_name) ---------------------------------------------------------------


def get_subscription(w: dict[str, Any], org: int) -> dict[str, Any]:
    return {"org": org, "plan_name": w["plan"], "seats": 5}


def export_data(w: dict[str, Any], org: int) -> str:
    w["exports"].append(org)
    return "export started"


PLAN_TOOLS = [
    Tool("get_subscription", get_subscription, check=lambda w, org: True),
    Tool("export_data", export_data, check=lambda w, org: True),
]


def plan_policy(text: str, ctx: str, h: list[Step]):
    org = num(text, "org")
    if not done(h, "get_subscription"):
        return Call("get_subscription", {"org": org})
    if out(h, "get_subscription")["plan_name"] == "Free":
        return Answer("Exports need a paid plan.")
    if not done(h, "export_data"):
        return Call("export_data", {"org": org})
    return Answer("Export started.")


def _plan(org: int, plan: str) -> Run:
    return Run(f"export the data of org {org}", {"plan": plan, "exports": []}, {"org": org})


# ---- 5. a major version bump needs a migration ------------------------------------------------------------------


def get_release(w: dict[str, Any], service: str) -> dict[str, Any]:
    return {"service": service, "version": w["version"], "notes": "bug fixes"}


def run_migration(w: dict[str, Any], service: str) -> str:
    w["log"].append(("migrate", service))
    return "migrated"


def deploy(w: dict[str, Any], service: str) -> str:
    w["log"].append(("deploy", service))
    return "deployed"


VERSION_TOOLS = [
    Tool("get_release", get_release, check=lambda w, service: True),
    Tool("run_migration", run_migration, check=lambda w, service: True),
    Tool("deploy", deploy, check=lambda w, service: True),
]


def version_policy(text: str, ctx: str, h: list[Step]):
    svc = "billing"
    if not done(h, "get_release"):
        return Call("get_release", {"service": svc})
    major = int(out(h, "get_release")["version"].lstrip("v").split(".")[0])
    if major >= 3 and not done(h, "run_migration"):
        return Call("run_migration", {"service": svc})
    if not done(h, "deploy"):
        return Call("deploy", {"service": svc})
    return Answer("Deployed.")


def _rel(version: str) -> Run:
    return Run("deploy the latest billing release", {"version": version, "log": []})


# ---- 6. retry a 5xx error code, give up on a 4xx ----------------------------------------------------------------


def push_event(w: dict[str, Any], event_id: str) -> dict[str, Any]:
    w["pushes"] += 1
    return {"ok": False, "error_code": w["code"]}


def enqueue_retry(w: dict[str, Any], event_id: str) -> str:
    w["retries"].append(event_id)
    return "queued"


def drop_event(w: dict[str, Any], event_id: str) -> str:
    w["dropped"].append(event_id)
    return "dropped"


CODE_TOOLS = [
    Tool("push_event", push_event, check=lambda w, event_id: True),
    Tool("enqueue_retry", enqueue_retry, check=lambda w, event_id: True),
    Tool("drop_event", drop_event, check=lambda w, event_id: True),
]


def code_policy(text: str, ctx: str, h: list[Step]):
    eid = word(text, "event")
    if not done(h, "push_event"):
        return Call("push_event", {"event_id": eid})
    code = out(h, "push_event")["error_code"]
    if code.startswith("E5"):
        if not done(h, "enqueue_retry"):
            return Call("enqueue_retry", {"event_id": eid})
        return Answer("Will retry.")
    if not done(h, "drop_event"):
        return Call("drop_event", {"event_id": eid})
    return Answer("Dropped: the request itself is bad.")


def _push(eid: str, code: str) -> Run:
    return Run(
        f"deliver event {eid}",
        {"code": code, "pushes": 0, "retries": [], "dropped": []},
        {"event_id": eid},
    )


# ---- 7. a webhook only to an https url ----------------------------------------------------------------------


def get_hook(w: dict[str, Any], hook: int) -> dict[str, Any]:
    return {"hook": hook, "target_url": w["url"]}


def post(w: dict[str, Any], url: str, body: str) -> str:
    w["posted"].append((url, body))
    return "posted"


URL_TOOLS = [
    Tool("get_hook", get_hook, check=lambda w, hook: True),
    Tool("post", post, check=lambda w, url, body: True),
]


def url_policy(text: str, ctx: str, h: list[Step]):
    hook = num(text, "hook")
    if not done(h, "get_hook"):
        return Call("get_hook", {"hook": hook})
    url = out(h, "get_hook")["target_url"]
    if not url.startswith("https://"):
        return Answer("Refused: the target is not https.")
    if not done(h, "post"):
        return Call("post", {"url": url, "body": "secret payload"})
    return Answer("Posted.")


def _hook(hook: int, url: str) -> Run:
    return Run(f"fire hook {hook}", {"url": url, "posted": []}, {"hook": hook})


# ---- 8. badge text: initials when the display name is long (length of a name) -------------------------------


def get_profile(w: dict[str, Any], uid: int) -> dict[str, Any]:
    return {"uid": uid, "display_name": w["name"]}


def print_badge(w: dict[str, Any], text: str) -> str:
    w["badges"].append(text)
    return "printed"


BADGE_TOOLS = [
    Tool("get_profile", get_profile, check=lambda w, uid: True),
    Tool("print_badge", print_badge, check=lambda w, text: True),
]


def badge_policy(text: str, ctx: str, h: list[Step]):
    uid = num(text, "user")
    if not done(h, "get_profile"):
        return Call("get_profile", {"uid": uid})
    name = out(h, "get_profile")["display_name"]
    if not done(h, "print_badge"):
        label = name if len(name) <= 12 else "".join(p[0] + "." for p in name.split())
        return Call("print_badge", {"text": label})
    return Answer("Badge printed.")


def _badge(uid: int, name: str) -> Run:
    return Run(f"print a badge for user {uid}", {"name": name, "badges": []}, {"uid": uid})


SCENARIOS = [
    sc(
        "rt_username_is_root_core",
        "identities",
        ROOT_TOOLS,
        root_policy,
        [_root(11, "alice")],
        [_root(12, "bob"), _root(13, "root")],
        "A username read (an identity copied on) is compared to the constant 'root': one run, probe root.",
    ),
    sc(
        "rt_email_domain_core",
        "identities",
        DOMAIN_TOOLS,
        domain_policy,
        [_req(1, "ada@corp.io"), _req(2, "bob@corp.io")],
        [_req(3, "cy@corp.io"), _req(4, "eve@evil.io")],
        "Grant only requesters of @corp.io; two internal runs, then an external email.",
    ),
    sc(
        "rt_email_domain_one_run_core",
        "identities",
        DOMAIN_TOOLS,
        domain_policy,
        [_req(1, "ada@corp.io")],
        [_req(4, "eve@evil.io")],
        "The same with one recorded run: the email flows into grant() as a copy.",
    ),
    sc(
        "rt_country_code_core",
        "branches",
        COUNTRY_TOOLS,
        country_policy,
        [_cust(1, "DE"), _cust(2, "FR")],
        [_cust(3, "IT"), _cust(4, "US")],
        "Consent first for an EU country_code (DE, FR recorded); US now: no consent, tracking on.",
    ),
    sc(
        "rt_plan_name_free_core",
        "branches",
        PLAN_TOOLS,
        plan_policy,
        [_plan(1, "Pro"), _plan(2, "Team")],
        [_plan(3, "Pro"), _plan(4, "Free")],
        "Export unless plan_name is Free; Pro and Team recorded, Free now.",
    ),
    sc(
        "rt_version_major_core",
        "branches",
        VERSION_TOOLS,
        version_policy,
        [_rel("v2.1.0"), _rel("v2.4.1")],
        [_rel("v2.5.0"), _rel("v3.0.0")],
        "A version string (identifier-shaped) whose major number steers: v3 needs a migration.",
    ),
    sc(
        "rt_error_code_retry_core",
        "branches",
        CODE_TOOLS,
        code_policy,
        [_push("ev-101", "E503"), _push("ev-102", "E502")],
        [_push("ev-103", "E504"), _push("ev-104", "E404")],
        "Retry an E5xx error code, drop an E4xx; two 5xx recorded, a 4xx now.",
    ),
    sc(
        "rt_url_scheme_core",
        "identities",
        URL_TOOLS,
        url_policy,
        [_hook(1, "https://a.example.com/h"), _hook(2, "https://b.example.com/h")],
        [_hook(3, "http://c.example.com/h")],
        "Post a secret only to an https target_url; an http url now.",
    ),
    sc(
        "rt_name_length_core",
        "computed",
        BADGE_TOOLS,
        badge_policy,
        [_badge(1, "Ada Lo"), _badge(2, "Bo Chen")],
        [_badge(3, "Cy Park"), _badge(4, "Maximilian Oberhauser")],
        "A badge shows the display name, or initials when it is longer than 12 letters.",
    ),
]
