"""How a value is written (``forms.py``): the secret-looking value read out of a text."""

from __future__ import annotations

import pytest

from muscle_mem.model._forms import Form, FormError

TEXT = (
    "Use https://x.example/reset?token=9f8Qz7LmXw2Rt5Vb, or the key sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56."
)


def test_the_secret_form_reads_the_numbered_secret_looking_span_of_a_text() -> None:
    """Span 0 and 1 are the text's first and second secret-looking values, in order."""
    assert Form("secret", width=0).render(TEXT) == "9f8Qz7LmXw2Rt5Vb"
    assert Form("secret", width=1).render(TEXT) == "sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56"
    assert Form("secret", width=0).describe() == "secret-looking value 0 of"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (TEXT, "no secret-looking value number 2"),
        ("nothing secret here", "no secret-looking value number 2"),
        (42, "int is not a text"),
    ],
)
def test_a_text_without_that_secret_looking_value_cannot_be_written_in_the_form(
    value: object, message: str
) -> None:
    """A replay whose live text holds fewer secret-looking values stops rather than guess."""
    with pytest.raises(FormError, match=message):
        Form("secret", width=2).render(value)
