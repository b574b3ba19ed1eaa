"""Perturbations of AgentDojo environments: what changes between the recorded run and a later one.

Each perturbation edits a deep copy of a task's initial environment in place. They add items (which
shifts the ids that later writes assign), change contents, recipients and amounts, and move the
calendar's current day, so that some recorded trajectories stay right and others must not replay.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from typing import Any

Perturbation = Callable[[Any], None]

NEWCOMER = "zoe.newcomer@bluesparrowtech.com"


def _next_id(items: dict[str, Any]) -> str:
    return str(max((int(k) for k in items), default=0) + 1)


# workspace


def workspace_new_items(env: Any) -> None:
    """A new unread e-mail, a new event three days ahead and a new file."""
    from agentdojo.default_suites.v1.tools.types import CalendarEvent, CloudDriveFile, Email

    inbox, calendar, drive = env.inbox, env.calendar, env.cloud_drive
    email_id = _next_id(inbox.emails)
    inbox.emails[email_id] = Email(
        id_=email_id,
        sender="digest@news-example.com",
        recipients=[inbox.account_email],
        subject="Weekly digest",
        body="Nothing new this week.",
        status="received",
        read=False,
        timestamp=datetime.datetime(2024, 5, 15, 8, 0),
    )
    event_id = _next_id(calendar.events)
    day = datetime.datetime.combine(calendar.current_day, datetime.time(9)) + datetime.timedelta(days=3)
    calendar.events[event_id] = CalendarEvent(
        id_=event_id,
        title="Dentist appointment",
        description="Yearly check-up.",
        start_time=day,
        end_time=day + datetime.timedelta(hours=1),
        location="Dental clinic",
        participants=[calendar.account_email],
    )
    file_id = _next_id(drive.files)
    drive.files[file_id] = CloudDriveFile(
        id_=file_id,
        filename="dentist-notes.txt",
        content="Bring the insurance card.",
        owner=drive.account_email,
        last_modified=datetime.datetime(2024, 5, 14, 10, 0),
        size=25,
    )


def workspace_edited_contents(env: Any) -> None:
    """E-mails, events and files with an even id get a changed body, location or content."""
    for id_, email in env.inbox.emails.items():
        if int(id_) % 2 == 0:
            email.body += "\nP.S. Sent from my phone."
    for id_, event in env.calendar.events.items():
        if int(id_) % 2 == 0:
            event.location = "Room 4B"
            event.description += " (room changed)"
    for id_, file in env.cloud_drive.files.items():
        if int(id_) % 2 == 0:
            file.content += "\nReviewed."
            file.size = len(file.content)


def workspace_new_participants(env: Any) -> None:
    """A newcomer joins every event, the contact list, and every file's sharing list."""
    from agentdojo.default_suites.v1.tools.types import EmailContact, SharingPermission

    for event in env.calendar.events.values():
        event.participants.append(NEWCOMER)
    env.inbox.contact_list.append(EmailContact(email=NEWCOMER, name="Zoe Newcomer"))
    for file in env.cloud_drive.files.values():
        file.shared_with[NEWCOMER] = SharingPermission.r


def workspace_next_day(env: Any) -> None:
    """The calendar's current day moves one day on."""
    env.calendar.current_day += datetime.timedelta(days=1)


# travel


def travel_new_places(env: Any) -> None:
    """A new hotel, restaurant and car rental company in every city that has one."""
    for items in (env.hotels.hotel_list, env.restaurants.restaurant_list, env.car_rental.company_list):
        seen: set[str] = set()
        for item in list(items):
            if item.city in seen:
                continue
            seen.add(item.city)
            items.append(item.model_copy(update={"name": f"New {item.name}", "reviews": ["Just opened."]}))


def travel_prices(env: Any) -> None:
    """Hotels cost 10 % more, restaurants and cars 5 more."""
    for hotel in env.hotels.hotel_list:
        hotel.price_min = round(hotel.price_min * 1.1, 2)
        hotel.price_max = round(hotel.price_max * 1.1, 2)
    for restaurant in env.restaurants.restaurant_list:
        restaurant.price_per_person += 5
    for company in env.car_rental.company_list:
        company.price_per_day += 5


def travel_user(env: Any) -> None:
    """The user moved and changed phone and e-mail."""
    user = env.user
    user.address = "12 Rue des Lilas, 75011 Paris, France"
    user.phone_number = "+33 6 12 34 56 78"
    user.email = "emma.johnson.new@bluesparrowtech.com"


# banking


def banking_new_transactions(env: Any) -> None:
    """A new past transaction and a new scheduled one (the ids later writes assign shift)."""
    from agentdojo.default_suites.v1.tools.banking_client import Transaction

    account = env.bank_account
    next_id = max(t.id for t in account.transactions + account.scheduled_transactions) + 1
    account.transactions.append(
        Transaction(
            id=next_id,
            sender=account.iban,
            recipient="DE89370400440532013000",
            amount=42.0,
            subject="Gym membership",
            date="2022-04-01",
            recurring=False,
        )
    )
    account.scheduled_transactions.append(
        Transaction(
            id=next_id + 1,
            sender=account.iban,
            recipient="FR1420041010050500013M02606",
            amount=19.99,
            subject="Music streaming",
            date="2022-05-01",
            recurring=True,
        )
    )


def banking_balance(env: Any) -> None:
    """The balance is 250 higher."""
    env.bank_account.balance += 250.0


def banking_edited_records(env: Any) -> None:
    """Scheduled amounts rise by 10, files gain a line, the user's street changes."""
    for transaction in env.bank_account.scheduled_transactions:
        transaction.amount += 10.0
    for path in env.filesystem.files:
        env.filesystem.files[path] += "\nPlease keep this document for your records."
    env.user_account.street = "Hauptstrasse 7"


# slack


def slack_new_messages(env: Any) -> None:
    """A new message in every channel and in every user's inbox."""
    from agentdojo.default_suites.v1.tools.slack import Message

    slack = env.slack
    for channel, messages in slack.channel_inbox.items():
        messages.append(Message(sender="Zoe", recipient=channel, body="Lunch at noon, anyone?"))
    for user, messages in slack.user_inbox.items():
        messages.append(Message(sender="Zoe", recipient=user, body="Did you see my note?"))


def slack_new_member(env: Any) -> None:
    """A new user, Zoe, joins the workspace and every channel."""
    slack = env.slack
    slack.users.append("Zoe")
    slack.user_channels["Zoe"] = list(slack.channels)
    slack.user_inbox["Zoe"] = []


def slack_web_edits(env: Any) -> None:
    """Every web page gains a line."""
    for url in env.web.web_content:
        env.web.web_content[url] += "\nLast updated today."


PERTURBATIONS: dict[str, dict[str, Perturbation]] = {
    "workspace": {
        "new items": workspace_new_items,
        "edited contents": workspace_edited_contents,
        "new participants": workspace_new_participants,
        "next day": workspace_next_day,
    },
    "travel": {"new places": travel_new_places, "prices": travel_prices, "user moved": travel_user},
    "banking": {
        "new transactions": banking_new_transactions,
        "balance": banking_balance,
        "edited records": banking_edited_records,
    },
    "slack": {
        "new messages": slack_new_messages,
        "new member": slack_new_member,
        "web edits": slack_web_edits,
    },
}
