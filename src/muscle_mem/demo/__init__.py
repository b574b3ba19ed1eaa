"""The demo's support desk: a SQLite CRM, a scripted LLM agent that works on it, and a task stream.

``desk`` is the environment, ``policy`` what the "LLM" decides, ``llm`` what that costs (latency,
tokens), ``agent`` the agent loop and the desk's methods as muscle-mem tools with their Checks, and
``workload`` the seeded stream of requests and of changes to the desk.
"""
