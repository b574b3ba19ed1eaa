"""LangChain's own standard tool suite (``langchain-tests``) passes on tools made by ``wrap_tool``.

Each class hands the suite a wrapped tool: a ``@tool`` function, one answering content and artifact,
an async-only one and a ``BaseTool`` subclass. The async-only tool gets the unit suite alone: the
integration suite invokes it synchronously, which LangChain refuses for such a tool unwrapped too.
``langchain-tests`` pulls in seven pytest plugins, so it is in no extra: ``pip install
langchain-tests`` to run these.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain_tests")

from langchain_core.tools import BaseTool, tool
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests
from pydantic import BaseModel

from muscle_mem import Check, Engine
from muscle_mem.integrations.langchain import wrap_tool


@tool
def lookup_order(order_id: int, verbose: bool = False) -> dict[str, Any]:
    """Look an order up by its id."""
    return {"order_id": order_id, "status": "shipped", "verbose": verbose}


@tool(response_format="content_and_artifact")
def search_orders(customer: str) -> tuple[str, list[int]]:
    """The orders of a customer: a summary and their ids."""
    return f"2 orders for {customer}", [7, 9]


@tool
async def refund_order(order_id: int, reason: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}: {reason}"


class ShipInput(BaseModel):
    order_id: int
    address: str


class ShipOrder(BaseTool):
    """A tool written as a ``BaseTool`` subclass with its own args schema."""

    name: str = "ship_order"
    description: str = "Ship an order to an address."
    args_schema: type[BaseModel] = ShipInput

    def _run(self, order_id: int, address: str) -> str:
        return f"shipped {order_id} to {address}"


def wrapped(original: BaseTool) -> BaseTool:
    """``original`` wrapped for an engine of its own, with a pre-check."""
    return wrap_tool(Engine(), original, pre_check=Check.equal(lambda **kwargs: "ready"))


class TestFunctionToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return wrapped(lookup_order)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"order_id": 7, "verbose": True}


class TestFunctionToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return wrapped(lookup_order)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"order_id": 7}


class TestContentAndArtifactToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return wrapped(search_orders)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"customer": "ada"}


class TestContentAndArtifactToolIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return wrapped(search_orders)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"customer": "ada"}


class TestAsyncOnlyToolUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return wrapped(refund_order)

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"order_id": 7, "reason": "late"}


class TestBaseToolSubclassUnit(ToolsUnitTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return wrapped(ShipOrder())

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"order_id": 7, "address": "1 Main St"}


class TestBaseToolSubclassIntegration(ToolsIntegrationTests):
    @property
    def tool_constructor(self) -> BaseTool:
        return wrapped(ShipOrder())

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"order_id": 7, "address": "1 Main St"}
