"""A labelled set of task-text pairs for the semantic matcher: do two texts ask for the same task?

Written by hand and by systematic construction (no downloads). Each pair is ``(a, b, same)``:

- :data:`DIFFERENT`: pairs a careful person would say ask for two tasks, built adversarially, grouped
  by what differs (negation and its scope, soft words inside a negated or scoped clause, proper vs
  common nouns, numbers, units, roles and direction, quantifiers, time words, words the normal form
  must not map) and by construction from :data:`BASES` (negated, negated with a soft word, dated);
- :data:`SAME`: paraphrases, built from :data:`BASES` (request framing, articles, capitalised first
  word, soft words that qualify the whole request) and by hand (spelling variants, units and their
  abbreviations, number words, contractions, listed synonyms), plus a few true paraphrases the guard
  knowingly refuses (:data:`SAME_REFUSED`), so that recall is measured honestly.

``tests/test_semantic_pairs.py`` runs every pair through the matcher; ``benchmarks/bench_semantic.py``
prints precision and recall per embedder.
"""

from __future__ import annotations

Pair = tuple[str, str, bool]

BASES = (
    "send the report to Bob",
    "archive the invoices of customer 4471",
    "restart the payment service",
    "delete the old backups",
    "book a table for 4 at 7pm",
    "list all files in the workspace",
    "reboot the build server",
    "email the invoice to the client",
    "refund order 1182",
    "move the meeting with Alice to Friday",
    "create a ticket for the login bug",
    "update the price of item 42 to 19.99",
    "add Carol to the admins group",
    "export the sales figures for March",
    "close the stale pull requests",
    "rotate the API keys for the staging cluster",
    "scale the web service to 3 replicas",
    "pause the nightly sync job",
    "translate the contract into German",
    "summarize the meeting notes",
    "renew the TLS certificate for example.com",
    "upload the photos to the shared drive",
    "cancel the subscription of user 812",
    "approve the expense report from Dave",
    "compress the log files in /var/log",
    "invite Erin to the planning meeting",
    "publish the release notes for version 2.3",
    "check the disk usage on db-1",
    "merge the feature branch into main",
    "order 12 boxes of printer paper",
)
"""Plain agent tasks (imperative, no soft word, no negation) the constructed pairs start from."""

_FRAMINGS = (
    "please {}",
    "can you {}?",
    "{}, please",
    "could you {}? Thanks!",
    "I need you to {}.",
    "Hey, {}",
    "would you {} please?",
)
_SOFT_FRAMINGS = ("just {}", "{} now", "quickly {}", "{} right now", "{} asap", "{} immediately")
_NEGATED_SOFT = (
    ("don't {} now", "don't {}"),
    ("don't just {}", "don't {}"),
    ("never {} immediately", "never {}"),
    ("do not quickly {}", "do not {}"),
    ("do not {} right now", "do not {}"),
)


def _capitalised(text: str) -> str:
    return text[0].upper() + text[1:]


def _without_articles(text: str) -> str:
    return " ".join(w for w in text.split() if w not in ("the", "a", "an"))


def _constructed_same() -> list[Pair]:
    pairs: list[Pair] = []
    for i, base in enumerate(BASES):
        pairs.append((_FRAMINGS[i % len(_FRAMINGS)].format(base), base, True))
        pairs.append((_SOFT_FRAMINGS[i % len(_SOFT_FRAMINGS)].format(base), base, True))
        pairs.append((_capitalised(base), _FRAMINGS[(i + 3) % len(_FRAMINGS)].format(base), True))
        if _without_articles(base) != base:
            pairs.append((_without_articles(base), base, True))
        pairs.append(
            (
                _FRAMINGS[i % 3].format(_SOFT_FRAMINGS[(i + 2) % len(_SOFT_FRAMINGS)].format(base)),
                _capitalised(base) + ".",
                True,
            )
        )
    return pairs


def _constructed_different() -> list[Pair]:
    pairs: list[Pair] = []
    for i, base in enumerate(BASES):
        pairs.append((base, f"don't {base}", False))
        negated, plain = _NEGATED_SOFT[i % len(_NEGATED_SOFT)]
        pairs.append((negated.format(base), plain.format(base), False))
        pairs.append((f"{base} today", f"{base} tomorrow", False))
    return pairs


NEGATION = [
    ("don't delete the draft, archive it", "delete the draft, don't archive it", False),
    ("do not email Bob, call him", "email Bob, do not call him", False),
    ("don't cancel the order if it isn't paid", "cancel the order if it isn't paid", False),
    ("never refund an order that was not shipped", "refund an order that was not shipped", False),
    ("send the invoice to the client", "do not send the invoice to the client", False),
    ("notify the users who did not log in", "notify the users who did log in", False),
    ("list the tests that are not flaky", "list the tests that are flaky", False),
    ("filter rows where status != 'done'", "filter rows where status = 'done'", False),
    ("ship the orders without a tracking number", "ship the orders with a tracking number", False),
    ("you can't skip the review", "you can skip the review", False),
    ("delete the logs except today's", "delete the logs and today's", False),
]
SOFT_IN_SCOPE = [
    ("don't reboot the server immediately", "don't reboot the server", False),
    ("don't just delete the backups", "don't delete the backups", False),
    ("delete the file I just created", "delete the file I created", False),
    ("undo the change I just made", "undo the change I made", False),
    ("reply to the email that just arrived", "reply to the email that arrived", False),
    ("delete the files you just uploaded", "delete the files you uploaded", False),
    ("restore the backup we just deleted", "restore the backup we deleted", False),
    ("reboot the server just before midnight", "reboot the server before midnight", False),
    ("call Bob immediately after the meeting", "call Bob after the meeting", False),
    ("delete the file I created just now", "delete the file I created", False),
    ("don't reply to Bob just yet", "don't reply to Bob yet", False),
    ("never delete the backups immediately", "never delete the backups", False),
    ("don't simply close the ticket", "don't close the ticket", False),
    ("without immediately notifying Bob, close the ticket", "without notifying Bob, close the ticket", False),
    ("only restart the web server now", "only restart the web server", False),
    ("immediately after the deploy, clear the cache", "after the deploy, clear the cache", False),
    ("list the files changed just now", "list the files changed", False),
    ("list the users logged in currently", "list the users logged in", False),
    ("list the users logged in now", "list the users logged in", False),
    ("just created files: delete them", "created files: delete them", False),
    ("show the jobs done now", "show the jobs done", False),
    ("quickly growing logs: compress them", "growing logs: compress them", False),
]
PROPER_AND_COMMON = [
    ("pay the bill", "pay Bill", False),
    ("buy an apple", "buy Apple", False),
    ("pay the bill for the hotel", "pay Bill for the hotel", False),
    ("sell the apple stock", "sell Apple stock", False),
    ("open the mail", "open Mail", False),
    ("clean the windows", "clean Windows", False),
    ("update the office", "update Office", False),
    ("search the amazon for orchids", "search Amazon for orchids", False),
    ("send the invoice to the mint", "send the invoice to Mint", False),
    ("water the rose in the garden", "water Rose in the garden", False),
    ("ask the guardian for the key", "ask Guardian for the key", False),
    ("call the bishop", "call Bishop", False),
    ("thank the baker for the cake", "thank Baker for the cake", False),
    ("notify the smith about the delay", "notify Smith about the delay", False),
    ("feed the turkey", "feed Turkey", False),
    ("buy a jaguar", "buy Jaguar", False),
    ("check the visa status", "check Visa status", False),
    ("book a room at the ritz for Ann", "book a room at Ritz for Ann", False),
    ("ship the china set to Ann", "ship China set to Ann", False),
    ("forward the invoice to Will", "forward the invoice to me", False),
    ("ship the order to the US", "ship the order to us", False),
    ("send the laptop to IT", "send the laptop to it", False),
    ("fill the form for John", "fill the form for Jane", False),
]
NUMBERS = [
    ("archive the invoices of customer 4471", "archive the invoices of customer 4472", False),
    ("refund order 1182", "refund order 1183", False),
    ("update the price of item 42 to 19.99", "update the price of item 24 to 19.99", False),
    ("update the price of item 42 to 19.99", "update the price of item 42 to 199.9", False),
    ("publish the release notes for version 2.3", "publish the release notes for version 2.4", False),
    ("scale the web service to 3 replicas", "scale the web service to 30 replicas", False),
    ("order 12 boxes of printer paper", "order 2 boxes of printer paper", False),
    ("set the temperature offset to -5", "set the temperature offset to 5", False),
    ("set the discount to .5", "set the discount to 5", False),
    ("order twelve boxes of paper", "order eleven boxes of paper", False),
    ("order two boxes of paper", "order 3 boxes of paper", False),
    ("book a table for 4", "book a table for 40", False),
    ("calculate (2 + 3) * 4", "calculate 2 + (3 * 4)", False),
    ("compute 5 + 3", "compute 5 - 3", False),
    ("list orders with total > 100", "list orders with total < 100", False),
    ("reserve seats 12 and 13", "reserve seats 12 to 13", False),
    ("adjust the balance by -100", "adjust the balance by +100", False),
    ("cancel the subscription of user 812", "cancel the subscription of user 8120", False),
]
UNITS = [
    ("wait 5 minutes", "wait 5 hours", False),
    ("run 5 km", "run 5 miles", False),
    ("allocate 10 MB to the cache", "allocate 10 GB to the cache", False),
    ("apply a 5% discount", "apply a $5 discount", False),
    ("set the timeout to 30 seconds", "set the timeout to 30 ms", False),
    ("keep the logs for 3 days", "keep the logs for 3 weeks", False),
    ("wait 5 mins", "wait 5 ms", False),
    ("ship 3 kg of flour", "ship 3 lb of flour", False),
    ("cut 2 cm off the board", "cut 2 mm off the board", False),
    ("convert 10 km to meters", "convert 10 miles to meters", False),
    ("send 5 dollars to Bob", "send 5 euros to Bob", False),
    ("send $5 to Bob", "send €5 to Bob", False),
    ("raise the limit by 10%", "raise the limit by 10", False),
    ("resize the disk to 500 gb", "resize the disk to 500 mb", False),
    ("snooze the alert for 2 hrs", "snooze the alert for 2 mins", False),
    ("buy 5 pounds of coffee", "buy 5 kg of coffee", False),
    ("set the delay to 5 m", "set the delay to 5 min", False),
    ("print the 3d model", "print the 3 day model", False),
]
ROLES = [
    ("copy a.txt to b.txt", "copy b.txt to a.txt", False),
    ("move the files from staging to prod", "move the files from prod to staging", False),
    ("send the report to Bob", "send the report from Bob", False),
    ("I owe you 50 dollars", "you owe me 50 dollars", False),
    ("give me Bob's admin rights", "give Bob my admin rights", False),
    ("share my calendar with you", "share your calendar with me", False),
    ("transfer $500 from checking to savings", "transfer $500 from savings to checking", False),
    ("make Alice report to Bob", "make Bob report to Alice", False),
    ("forward my emails to Carol", "forward Carol's emails to me", False),
    ("upload the photos to the drive", "download the photos from the drive", False),
    ("add Carol to the admins group", "remove Carol from the admins group", False),
    ("convert dollars to euros", "convert euros to dollars", False),
    ("translate the contract into German", "translate the contract from German", False),
    ("import the contacts into the CRM", "export the contacts from the CRM", False),
    ("ask Bob to call Alice", "ask Alice to call Bob", False),
    ("subscribe me to the newsletter", "subscribe you to the newsletter", False),
    ("invite us to the meeting", "invite them to the meeting", False),
    ("message Dave about my order", "message Dave about his order", False),
    ("copy the files to the backup folder", "copy the files in the backup folder", False),
    ("move 5 units from A to B", "move 5 units from B to A", False),
]
QUANTIFIERS = [
    ("delete all the old logs", "delete some of the old logs", False),
    ("delete all files", "delete no files", False),
    ("notify every customer", "notify one customer", False),
    ("close all tickets", "close none of the tickets", False),
    ("email both managers", "email either manager", False),
    ("keep at least 3 backups", "keep at most 3 backups", False),
    ("delete all but 3 backups", "delete 3 backups", False),
    ("refund every order from Bob", "refund the first order from Bob", False),
    ("restart all services", "restart one service", False),
    ("delete every other line", "delete every line", False),
    ("remove duplicates from all sheets", "remove duplicates from one sheet", False),
    ("invite everyone to the meeting", "invite no one to the meeting", False),
    ("show the top 5 products", "show the bottom 5 products", False),
    ("delete the first row", "delete the last row", False),
    ("select all rows", "select no rows", False),
    ("mute all channels", "mute some channels", False),
    ("check every server", "check a server", False),
    ("list all users", "list any user", False),
]
TIME = [
    ("schedule the backup for today", "schedule the backup for tomorrow", False),
    ("send the report before the meeting", "send the report after the meeting", False),
    ("show yesterday's sales", "show today's sales", False),
    ("book a flight for next week", "book a flight for this week", False),
    ("remind me in the morning", "remind me in the evening", False),
    ("move the meeting to Monday", "move the meeting to Tuesday", False),
    ("list the orders since March", "list the orders until March", False),
    ("run the job daily", "run the job weekly", False),
    ("restart the server at 5pm", "restart the server at 5am", False),
    ("archive emails older than 30 days", "archive emails newer than 30 days", False),
    ("pay the invoice by Friday", "pay the invoice on Friday", False),
    ("deploy after the tests pass", "deploy before the tests pass", False),
    ("show last month's invoices", "show this month's invoices", False),
    ("renew the domain now", "renew the domain later", False),
    ("send the report now", "send the report tonight", False),
    ("back up the database hourly", "back up the database nightly", False),
    ("list the users deleted today", "list the users to delete today", False),
    ("email customers who were subscribers", "email customers who are subscribers", False),
    ("list the files now", "list the files then", False),
]
NOT_MAPPED = [
    ("mail the invoice to the client", "email the invoice to the client", False),
    ("e-mail the invoice to the client", "mail the invoice to the client", False),
    ("remove the SD card", "erase the SD card", False),
    ("reply to ticket 4471 with thanks", "reply to ticket 4471 with please", False),
    ("what is the French for please", "what is the French for", False),
    ("delete the record", "delete the records", False),
    ("show the fetched rows", "show the rows", False),
    ("restart the server now", "restart the server", True),
    ("now", "just", False),
]
"""Words the normal form must not treat as one (and one it must: ``now`` closing a plain request)."""

SPELLING_AND_UNITS = [
    ("e-mail the report to Bob", "email the report to Bob", True),
    ("change the colour of the header", "change the color of the header", True),
    ("show my cancelled orders", "show my canceled orders", True),
    ("organise the files by date", "organize the files by date", True),
    ("add the song to my favourites", "add the song to my favorites", True),
    ("analyse the sales data", "analyze the sales data", True),
    ("set the background to grey", "set the background to gray", True),
    ("fix the log-in page", "fix the login page", True),
    ("add a to-do for the review", "add a todo for the review", True),
    ("finish the set-up of the printer", "finish the setup of the printer", True),
    ("wait 5 mins", "wait 5 minutes", True),
    ("snooze the alarm for 10 min", "snooze the alarm for 10 minutes", True),
    ("set the timeout to 30 secs", "set the timeout to 30 seconds", True),
    ("keep the logs for 2 hrs", "keep the logs for 2 hours", True),
    ("run 5 km", "run 5 kilometers", True),
    ("ship 3 kg of flour", "ship 3 kilograms of flour", True),
    ("resize the disk to 500 gb", "resize the disk to 500 GB", True),
    ("apply a 5% discount", "apply a 5 percent discount", True),
    ("send 20 dollars to Bob", "send $20 to Bob", True),
    ("wait 10min", "wait 10 minutes", True),
    ("set the timer for 2 hours", "set the timer for two hours", True),
    ("order twelve boxes of paper", "order 12 boxes of paper", True),
    ("walk 3 miles", "walk three miles", True),
    ("set the delay to 250 ms", "set the delay to 250 milliseconds", True),
    ("retain the backups for 4 weeks", "retain the backups for 4 wks", True),
    ("run 10km", "run 10 km", True),
]
WORDING = [
    ("what's the weather in Paris", "what is the weather in Paris", True),
    ("I'm out of office, set the auto reply", "I am out of office, set the auto reply", True),
    ("it's urgent: restart the server", "it is urgent: restart the server", True),
    ("fetch the weather forecast for Paris", "get the weather forecast for Paris", True),
    ("remove the file notes.txt", "delete the file notes.txt", True),
    ("look up the order status", "find the order status", True),
    ("fill out the form for Alice", "fill in the form for Alice", True),
    ("purchase 3 tickets", "buy 3 tickets", True),
    ("send the report to Bob now", "send the report to Bob", True),
    ("can you quickly e-mail the invoice to Bob now?", "email the invoice to Bob", True),
    ("Delete the logs", "delete the logs", True),
    ("please fill the form for {name}", "fill in the form for {name}", True),
    (
        "Can you list all files in the workspace directory?",
        "list all the files in the workspace directory",
        True,
    ),
    ("Restart the server. Thanks!", "restart the server", True),
    ("send the report to Bob now, thanks", "send the report to Bob", True),
    ("could you please just archive the old tickets?", "archive old tickets", True),
]
SAME_REFUSED = [
    ("read chapter one", "read chapter 1", True),
    ("stop the job quickly", "stop the job", True),
    ("email bob the report", "email Bob the report", True),
    ("play baby Shark", "play Baby Shark", True),
    ("delete every file", "delete each file", True),
    ("show the users currently online", "show the users online", True),
    ("restart the server that crashed now", "restart the server that crashed", True),
]
"""Paraphrases the guard refuses on purpose: a lower-case name may be a common noun, ``stop`` scopes,
``one`` is also a pronoun, a soft word inside a text or after a clause may qualify it."""

CONSTRUCTED_DIFFERENT = _constructed_different()
CONSTRUCTED_SAME = _constructed_same()
DIFFERENT: list[Pair] = (
    CONSTRUCTED_DIFFERENT
    + NEGATION
    + SOFT_IN_SCOPE
    + PROPER_AND_COMMON
    + NUMBERS
    + UNITS
    + ROLES
    + QUANTIFIERS
    + TIME
    + [p for p in NOT_MAPPED if not p[2]]
)
SAME: list[Pair] = (
    CONSTRUCTED_SAME + SPELLING_AND_UNITS + WORDING + SAME_REFUSED + [p for p in NOT_MAPPED if p[2]]
)
PAIRS: list[Pair] = DIFFERENT + SAME


HELD_OUT: list[Pair] = [
    # Different meanings of the kinds a lexicon does not foresee, kept out of the guard's tuning: the
    # engine must not replay across them whatever the guard says (a similar task is only a candidate).
    ("cancel my subscription", "cancel my subscription immediately", False),
    ("cancel my subscription", "Cancel my subscription NOW, not at renewal", False),
    ("delete the old backups", "NEVER delete the old backups", False),
    ("delete the old backups", "refuse to delete the old backups", False),
    ("archive the logs", "stop archiving the logs", False),
    ("archive the logs", "avoid archiving the logs", False),
    ("send the report to Grace", "send the report to Grace. Thanks", False),
    ("send the report to Grace", "send the report, Grace", False),
    ("ship the order", "ship the order tomorrow", False),
    ("email the invoice to Bill", "email the invoice to bill", False),
    ("Book the flight. Mark it paid", "Book the flight. mark it paid", False),
    ("can the project", "the project", False),
    ("close the ticket", "close the ticket later", False),
    ("print the labels", "print the labels twice", False),
    ("refund order 4471", "refund order 4471 partially", False),
    ("pay the invoice", "pay the invoice early", False),
    ("restart the server", "restart the server gracefully", False),
    ("transfer the funds", "transfer the funds back", False),
    # Paraphrases, for recall.
    ("please restart the web server", "restart the web server", True),
    ("can you close ticket 12", "close ticket 12", True),
    ("send the e-mail to Ada", "send the email to Ada", True),
    ("please refund order 4471", "refund order 4471 please", True),
]
"""Pairs kept out of the guard's tuning (the engine never replays across a similar task on its own)."""
