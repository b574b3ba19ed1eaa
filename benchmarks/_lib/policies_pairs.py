"""Labelled task pairs for the semantic matcher: should two task texts share a trajectory?

Four sources, each reported apart:

- ``BFCL_NEIGHBOURS``: each user request of the bfcl-eval data paired with its nearest other request
  (by sentence embedding), the closest 110 pairs labelled by hand (a few ambiguous ones left out):
  the same request reworded (True) or a different request on the same subject (False);
- ``SAFETY``: hand-written near misses an agent must never confuse (opposite actions, negation, a
  different id or file) and hand-written paraphrases of agent tasks;
- :func:`framed`: bfcl-eval requests with their request framing changed ("Please ...", "Can you ...?");
- :func:`flipped`: bfcl-eval requests with one action word replaced by its opposite, or one number changed.

Request texts quoted from bfcl-eval (Berkeley Function-Calling Leaderboard) are Apache-2.0.
"""

from __future__ import annotations

import random
import re

Pair = tuple[str, str, bool]

BFCL_NEIGHBOURS: tuple[tuple[str, str, bool], ...] = (
    (
        "Give me an analysis trail for my project id SUPERFANCY with component UUID AB1010CD and vulnerability ef903ac-893-f00",
        "Give me an analysis trail for my project SUPERFANCY with component UUID AB1010CD and vulnerability ef903ac-893-f00",
        True,
    ),
    ("play Baby Shark", "play baby Shark", True),
    (
        'can you create todo for "go for shopping at 9 pm"',
        "can you create todo for 'go for shopping at 9 pm'",
        True,
    ),
    ("What's the current time in Sydney, Australia?", "What is the current time in Sydney, Australia?", True),
    ("which movies are playing today in Noida?", "what movies are playing in Noida today?", True),
    (
        "How to obtain the detailed case information of the 'R vs Adams' legal case?",
        "How to obtain the detailed case information of the R vs Adams legal case?",
        True,
    ),
    (
        "I NEED ALL API TOKENS NOW!!! My user ID is 12345.",
        "I NEED ALL API TOKENS NOW!!! My user ID is 12345",
        True,
    ),
    (
        "get the detailed information regarding Adriel's internship at Sebelas Maret University?",
        "Get the details of Adriel's internship at Sebelas Maret University?",
        True,
    ),
    (
        "Can you retrieve the analysis trail for the vulnerability ef903ac-893-f00 within component AB1010CD of the project SUPERFANCY?",
        "Can you retrieve the analysis trail for the vulnerability ef903ac-893-f00 within the component AB1010CD of my project with id SUPERFANCY?",
        True,
    ),
    (
        "Could you tell me the current weather conditions, including the temperature, wind, and precipitation, for London in the UK?",
        "Could you tell me the current weather conditions in London, United Kingdom, including the temperature, wind speed, and any precipitation?",
        True,
    ),
    ("What is the host count for February 15th 2022?", "What is the host count for February 2022?", False),
    (
        "How much CO2 is produced annually by a gas-fueled car that travels 12,000 miles per year, with fuel efficiency of 25 MPG ?",
        "How much CO2 is produced annually by a gas-fueled car that travels 12,000 miles per year with fuel efficiency 20 mpg?",
        False,
    ),
    (
        "Who was the president of the United States during the American Civil War?",
        "Who was the U.S. president during the Civil War?",
        True,
    ),
    (
        "<<question>> What\\'s the weather like in the two cities of Boston and San Francisco?",
        "What's the weather like in the two cities of Boston and San Francisco?",
        True,
    ),
    (
        "Calculate the area and circumference of a circle with a radius of 5 units.",
        "Calculate the area of a circle with a radius of 5 units.",
        False,
    ),
    ("version?", "Version?", True),
    (
        "Could you browse attractions in Paris, that are suitable for children and offer free entry?",
        "Can you search for attractions in Paris that are suitable for children and have free entry?",
        True,
    ),
    (
        "Could you tell me the current weather conditions in Boston, MA and also in San Francisco in fahr?",
        "Could you tell me the current weather conditions for Boston, MA and also for San Francisco?",
        False,
    ),
    (
        "Hi, I am Karan. Could you tell me the current status of my Indigo flight 6E123? My ticket number is IND4567.",
        "Hi, I am Karan. Can you tell me the current status of my Indigo flight? My ticket number is IND4567.",
        False,
    ),
    (
        "Could you tell me the current weather in Boston, MA and also in San Francisco?",
        "Could you tell me the current weather conditions for Boston, MA and also for San Francisco?",
        True,
    ),
    ("What is the version?", "what version?", True),
    (
        "Predict the growth of forest in Yellowstone National Park for the next 5 years including human impact.",
        "Predict the growth of forest in Yellowstone for the next 5 years including human impact.",
        True,
    ),
    (
        "Could you provide me with a list of all the PostgreSQL servers currently set up in our environment?",
        "Could you show me a list of all the PostgreSQL servers that are currently registered in our environment?",
        True,
    ),
    ("who is park ji sung", "who is ji sung park?", True),
    (
        "Could you tell me the current weather conditions in London, including the temperature and wind speed?",
        "Could you tell me the current weather conditions, including the temperature, wind, and precipitation, for London in the UK?",
        False,
    ),
    (
        "tell me the current version information of app, with name and version number?",
        "Can you tell me the current version information of the application, including the name and version number?",
        True,
    ),
    (
        "Help find a housekeeper who provides ironing services in Chonburi Province. with a review score of 4.5 stars or more, available on 12/03/2024 16:00 - 18:00 and has never had a history of being late to work",
        "Help find a housekeeper who provides ironing services in Chonburi Province. with a review score of 4.5 stars or more, available on 12/03/2024 16:00 - 18:00.",
        False,
    ),
    (
        "Find me a Music event happening in San Diego, CA on 2023-04-08?",
        "Find any Music events happening in San Diego, CA on 05/05/2023?",
        False,
    ),
    (
        "I forgot all the API tokens, can you remind me of them? My user ID is 123456789.",
        "I forgot all the API tokens, can you remind me of them? My user ID is 12345.",
        False,
    ),
    (
        "Find some Electropop songs that were released in 2019?",
        "Can you find some Electropop songs released in 2019 for me?",
        True,
    ),
    (
        "Could you tell me the current price of AAPL on the NASDAQ?",
        "Can you tell me the latest stock price for AAPL on NASDAQ?",
        True,
    ),
    (
        "Calculate the compound interest of an investment of $10,000 at an interest rate of 5% compounded yearly for 10 years.",
        "Find the compound interest for an investment of $10000 with an annual interest rate of 5% compounded monthly for 5 years.",
        False,
    ),
    (
        "Find me a bus itinerary from San Francisco to Los Angeles for April 25, 2023?",
        "I need to search for a bus itinerary from San Francisco to Los Angeles for April 22nd 2023.",
        False,
    ),
    (
        "Could you provide the current version information of the application, including the application name and its version number?",
        "Can you tell me the current version information of the application, including the name and version number?",
        True,
    ),
    (
        'I forgot all the API tokens, can you remind me of them? My user ID is "user123"',
        "I forgot all the API tokens, can you remind me of them? My user ID is 123456789.",
        False,
    ),
    (
        "Could you retrieve a list of all the PostgreSQL servers in our environment, please?",
        "Could you provide me with a list of all the PostgreSQL servers currently set up in our environment?",
        True,
    ),
    (
        "Get the working hours of Louvre Museum in Paris.",
        "Find out the open hours for the Louvre Museum in Paris.",
        True,
    ),
    (
        "Calculate the future value of my investment of $1000 with an annual interest rate of 5% over 2 years.",
        "Calculate the Future Value of an investment of $1000 with an annual interest rate of 5% for 1,5 and 10 years.",
        False,
    ),
    (
        "I want to listen to 'Dil Nu' by Maninder Buttar. Can you find it on Spotify.",
        "I'd like to listen to the song 'Dil Nu' by Maninder Buttar on Spotify.",
        True,
    ),
    (
        "Calculate the compounded interest for an initial principal of $5000, annual interest rate of 5%, and compounding period of 10 years.",
        "Calculate the compound interest for an initial principal amount of $10000, with an annual interest rate of 5% and the number of times interest applied per time period is 4 and the time the money is invested for 10 years.",
        False,
    ),
    (
        "Could you locate any theater events in New York on the 12th of March?",
        "Help me locate any theater events happening in New York on March 12th?",
        True,
    ),
    (
        "Find me some theater events happening in New York?",
        "Help me locate any theater events happening in New York on March 12th?",
        False,
    ),
    (
        "What is the combined circumference of four circles, where the first circle has a radius of 5m, the second circle has a radius of 10m, the third circle has a radius of 15m, and the fourth circle has a radius of 20m, and I want the output in meters?",
        "What is the total circumference of four circles, where the first circle has a radius of 5cm, the second circle has a radius of 10cm, the third circle has a radius of 15cm, and the fourth circle has a radius of 20cm?",
        False,
    ),
    (
        "What is the total area of three circles, where the first circle has a radius of 5 meters, the second circle has a radius of 10 meters, and the third circle has a radius of 15 meters, all measured in meters?",
        "What is the combined circumference of four circles, where the first circle has a radius of 5m, the second circle has a radius of 10m, the third circle has a radius of 15m, and the fourth circle has a radius of 20m, and I want the output in meters?",
        False,
    ),
    (
        "Could you retrieve a list of sensor alerts for the network with the ID L_579838452023959405, limiting the results to 50 entries per page?",
        "Could you retrieve a list of sensor alerts, showing 10 entries per page for the network with ID L_579838452023959405?",
        False,
    ),
    (
        "What is the total distance in kilometers if I start my journey from New York, travel to Los Angeles, then from Los Angeles to Miami, and finally from Miami back to New York?",
        "What is the shortest driving distance in miles from New York City to Los Angeles and then from Los Angeles to Miami, considering that you have to return to New York City from Miami?",
        False,
    ),
    (
        "Calculate the Future Value of a $5000 investment made today for a term of 10 years at an annual interest rate of 5%",
        "Calculate the Future Value of an investment of $1000 with an annual interest rate of 5% for 1,5 and 10 years.",
        False,
    ),
    (
        "I'm looking for a music event in New York on the date 2023-05-21.",
        "I'm looking for a Music event in New York on March 7th 2023.",
        False,
    ),
    (
        "Help find a housekeeper who provides ironing services in Bangkok, Chatuchak District, with a review score of 4.5 stars or more.",
        "Help find a housekeeper who provides ironing services in Bangkok, Khlong Sam Wa District, Sai Kong Subdistrict, with a review score of 4.5 stars or more.",
        False,
    ),
    (
        "Calculate the probability of getting exactly 5 heads in 8 tosses of a fair coin.",
        "Find the probability of getting exactly 5 heads in 10 fair coin tosses.",
        False,
    ),
    (
        "Find the roots of a quadratic equation with coefficients a=1, b=-3, c=2.",
        "Find all the roots of a quadratic equation given coefficients a = 3, b = -11, and c = -4.",
        False,
    ),
    (
        "List all PostgreSQL servers from our environment?",
        "Could you provide me with a list of all the PostgreSQL servers currently set up in our environment?",
        True,
    ),
    (
        "Find any theater events happening in Los Angeles on March 9th?",
        "Find any movie theater events happening in Los Angeles?",
        False,
    ),
    (
        "Calculate the derivative of the function 3x^2 + 2x - 1.",
        "Calculate the derivative of the function 2x^2 at x = 1.",
        False,
    ),
    (
        "I'm looking for a Music event happening on 09/09/2023 in New York.",
        "I'm looking for a Music event in New York on March 7th 2023.",
        False,
    ),
    (
        "Can you give me the current price for the ticker symbol AAPL on NASDAQ?",
        "Could you tell me the current price of AAPL on the NASDAQ?",
        True,
    ),
    (
        "Help find a housekeeper who provides ironing services in Bangkok, Chatuchak District, with a review score of 4 stars or more",
        "Help find a housekeeper who provides ironing services in Bangkok, Chatuchak District, with a review score of 4.5 stars or more.",
        False,
    ),
    (
        "What is the tech stack that employee (id Adriel) was working on",
        "What is the tech stack that Adriel is working on",
        True,
    ),
    (
        "Find me a music event happening in New York on the 1st of march? 2023",
        "Find a music event in New York on the 25th of march 2023? today is march 15th",
        False,
    ),
    (
        "Could you provide the current weather data for London in the UK, including the temperature, wind speed, and precipitation levels?",
        "Could you tell me the current weather conditions, including the temperature, wind, and precipitation, for London in the UK?",
        True,
    ),
    (
        "Find any music or theater events happening in San Diego, CA on March 1st 2023?",
        "Find any Music events happening in San Diego, CA on 05/05/2023?",
        False,
    ),
    (
        "Find any Theater events in Seattle, WA?",
        "Find a Theater event happening in Seattle, WA on the 15th of May 2023?",
        False,
    ),
    (
        "Find me some musical events happening in New York?",
        "Find me some theater events happening in New York?",
        False,
    ),
    (
        "I need to register a new PostgreSQL server with the nickname 'MainDB', the host name 'pg.example.org', port number 5432, and the default database called 'sales_db'. The username is 'admin' and the password is 'password'.",
        "I need to add a new Postgres server configuration. The nickname will be 'PrimaryDB', host is '192.168.0.12', port is 5432, the database name is 'main_db', username is 'admin', and the password is 'securePass123'.",
        False,
    ),
    (
        "Can you retrieve the list of alarms that I have set? My user ID is 12345.",
        "May I see the alarms that I have set? with user id 12345",
        True,
    ),
    (
        "I need to set up a new PostgreSQL server with the nickname 'PG1', using the hostname 'pg.example.org', port 5432, a database named 'main_db', with the username 'admin' and a secure password 123412. Could you assist with this?",
        "I need to register a new PostgreSQL server with the nickname 'MainDB', the host name 'pg.example.org', port number 5432, and the default database called 'sales_db'. The username is 'admin' and the password is 'password'.",
        False,
    ),
    (
        "Could you provide the analysis trail for project SUPERFANCY with the component UUID AB1010CD and the vulnerability ID ef903ac-893-f00?",
        "Give me an analysis trail for my project id SUPERFANCY with component UUID AB1010CD and vulnerability ef903ac-893-f00",
        True,
    ),
    (
        "get a Music event happening in San Diego on 2023-05-02?",
        "Find me a Music event happening in San Diego, CA on 2023-04-08?",
        False,
    ),
    (
        "Can you provide information about the internship at Universitas Sebelas Maret that Adriel participated in?",
        "get the detailed information regarding Adriel's internship at Sebelas Maret University?",
        True,
    ),
    (
        "I'm looking for a good time in New York. search up some music events happening there this weekend?",
        "I'm looking for a music event in New York this weekend. Any suggestions?",
        True,
    ),
    (
        "Calculate the area under the curve y=3x^2 + 2x - 4, between x = -1 and x = 2.",
        "Calculate the area under the curve y=x^2 from x=1 to x=3.",
        False,
    ),
    (
        "Find the highest common factor for 36 and 48, and then tell me how steep the curve of the function f(x) = x^2 is at x = 5?",
        "Can you first calculate the greatest common divisor of the numbers 36 and 48 and then estimate the derivative of the function f(x) = x^2 at the point x = 5?",
        True,
    ),
    (
        "Can you reserve tickets for two adults for a train journey from New York, NY to Los Angeles on May 5th, 2023, starting at 15:00, with trip protection included?",
        "Could you reserve tickets for two adults for a train ride from New York, NY to Los Angeles on April 23, 2023, starting at 10:00 AM without trip protection and in business class?",
        False,
    ),
    (
        "What is the result if you calculate the factorial of 5, the factorial of 3, then the factorial of 4 and finally the factorial of 2?",
        "What is the results of the factorial of 5, the factorial of 7, and the factorial of 9?",
        False,
    ),
    (
        "I need to rent a car in Los Angeles, find options for a sedan available from 2023 April 21st to April 25th, with pickup and return times at 10:00 AM?",
        "I need to rent a car in Los Angeles. Find what's available from April 18th 2023 at 10am until April 24th?",
        False,
    ),
    (
        "is docker running, please use docker ps to find out",
        "check weather docker is running using docker ps",
        True,
    ),
    (
        "What is the shortest driving distance from New York City to Los Angeles, and then from Los Angeles to Miami, considering both the shortest and scenic route preferences?",
        "What is the shortest driving distance in miles from New York City to Los Angeles and then from Los Angeles to Miami, considering that you have to return to New York City from Miami?",
        False,
    ),
    (
        "Calculate the Present Value of an investment paying $1000 per year, with an interest rate of 5%, for 10, 20 and 30 years.",
        "Calculate the Future Value of an investment of $1000 with an annual interest rate of 5% for 1,5 and 10 years.",
        False,
    ),
    (
        "Could you tell me the current weather conditions in Boston, MA?",
        "Could you tell me the current weather conditions in Boston, MA and also in San Francisco in fahr?",
        False,
    ),
    (
        "Calculate the area of a triangle with base 5m and height 3m.",
        "Calculate the area of a triangle with base 6 and height 10.",
        False,
    ),
    (
        "I need a 'Plus' Uber from 2020 Addison Street, Berkeley, CA, and I can wait up to 10 minutes for it.",
        "I need a Comfort Uber ride from 2020 Addison Street, Berkeley, CA, USA, and I can wait up to 600 seconds for it.",
        False,
    ),
    (
        "Could you suggest some Offbeat genre movies directed by Tim Burton with Johnny Depp in the cast?",
        "Find me a list of Offbeat genre movies directed by Tim Burton?",
        False,
    ),
    (
        "I'd like to send $200 to my friend Alice using my debit card. Can we also ensure the transaction remains private?",
        "Can you assist me in sending $150 to Alice using my debit card? Keep the transaction private.",
        False,
    ),
    (
        "Can you provide me with the details of Adriel's internship at the sebelas maret university?",
        "Can you provide information about the internship at Universitas Sebelas Maret that Adriel participated in?",
        True,
    ),
    (
        "Calculate the Body Mass Index (BMI) of a person with a weight of 85 kilograms and height of 180 cm.",
        "Calculate the BMI (Body Mass Index) of a person who weighs 70kg and is 1.75m tall.",
        False,
    ),
    (
        "I'm in the mood for a good laugh. Find a comedy movie directed by Edgar Wright?",
        "I'm in the mood for a good laugh. Explore some Comedy movies for me, maybe something with Jim Carrey in it?",
        False,
    ),
    (
        "Could you assist me in finding a home to rent in San Francisco? I'm looking for a place with at least 3 bedrooms and 2 bathrooms. It would be great if it had a garage and in-unit laundry facilities as well.",
        "Find me homes available for purchase in San Francisco, with at least 3 bedrooms and 2 bathrooms? I'm not concerned about having a garage or in-unit laundry.",
        False,
    ),
    (
        "What's the root of quadratic equation with coefficients 2, 3 and -4?",
        "What are the roots of the quadratic equation where a=2, b=5 and c=3 ?",
        False,
    ),
    (
        "Can you provide me with the details of Adriel's education at Universitas Sebelas Maret (UNS)?",
        "Can you provide me with the details of Adriel's internship at the sebelas maret university?",
        False,
    ),
)
SAFETY: tuple[Pair, ...] = (
    ("activate user 4471", "deactivate user 4471", False),
    ("delete the file a.txt", "create the file a.txt", False),
    ("enable two-factor authentication for alice", "disable two-factor authentication for alice", False),
    ("lock the front door", "unlock the front door", False),
    ("upload report.pdf to the shared drive", "download report.pdf from the shared drive", False),
    ("add bob to the admins group", "remove bob from the admins group", False),
    ("subscribe me to the weekly newsletter", "unsubscribe me from the weekly newsletter", False),
    ("buy 100 shares of AAPL", "sell 100 shares of AAPL", False),
    ("increase the thermostat by 2 degrees", "decrease the thermostat by 2 degrees", False),
    ("open the garage door", "close the garage door", False),
    ("start the backup job", "stop the backup job", False),
    ("turn on the living room lights", "turn off the living room lights", False),
    ("approve the pending expense report", "reject the pending expense report", False),
    ("grant alice write access to the repo", "revoke alice's write access to the repo", False),
    ("encrypt the backup archive", "decrypt the backup archive", False),
    ("mute the team channel", "unmute the team channel", False),
    ("follow @nasa on twitter", "unfollow @nasa on twitter", False),
    ("sort the orders by date in ascending order", "sort the orders by date in descending order", False),
    ("send the invoice to the client", "do not send the invoice to the client", False),
    ("archive the emails older than 30 days", "archive the emails older than 60 days", False),
    ("refund order 1182", "refund order 1183", False),
    ("copy a.txt to b.txt", "copy b.txt to a.txt", False),
    ("transfer $500 from checking to savings", "transfer $500 from savings to checking", False),
    ("fill the form for John", "fill the form for Jane", False),
    ("what is the weather in Paris", "what is the weather in London", False),
    ("book a table for two at 7pm", "cancel the table for two at 7pm", False),
    ("delete the file a.txt", "delete the file a.txt permanently", False),
    ("find flights to Tokyo", "find hotels in Tokyo", False),
    ("reply to the last email from my manager", "forward the last email from my manager", False),
    ("install numpy in the project environment", "uninstall numpy in the project environment", False),
    ("please fill the form for {name}", "fill in the form for {name}", True),
    ("activate user {user}", "please activate user {user}", True),
    ("delete the file {path}", "remove the file {path}", True),
    (
        "Find the area of a triangle with base 10 and height 5",
        "compute the area of a triangle with base 10 and height 5",
        True,
    ),
    ("get the weather forecast for Paris", "fetch the weather forecast for Paris", True),
    ("search for flights from JFK to LAX", "find flights from JFK to LAX", True),
    (
        "Can you list all files in the workspace directory?",
        "list all the files in the workspace directory",
        True,
    ),
    ("create a new ticket titled 'login broken'", "please create a ticket titled 'login broken'", True),
    ("I want to buy two tickets for the Eminem concert", "purchase two tickets for the Eminem concert", True),
    ("show me my last 10 orders", "display my last 10 orders", True),
    ("Could you book a table for two at 7pm?", "reserve a table for two at 7pm", True),
    ("update the status of ticket 42 to closed", "change the status of ticket 42 to closed", True),
    ("send the weekly report to the team", "email the weekly report to the team", True),
    (
        "calculate the monthly payment for a $200,000 loan at 5% over 30 years",
        "what is the monthly payment on a $200,000 loan at 5% for 30 years",
        True,
    ),
    ("summarize the latest sales figures", "give me a summary of the latest sales figures", True),
)

FRAMES = ("Please {}.", "Can you {}?", "Could you {}, please?", "I need you to {}.", "{}, please.", "{}")
VERBS = re.compile(
    r"^(find|calculate|get|compute|search|list|show|tell|give|book|create|check|retrieve|play|send|add|"
    r"fetch|convert|predict|provide|set|update|delete|remove|move|sort|identify|determine|estimate)\b",
    re.IGNORECASE,
)
OPPOSITES = (
    ("add", "remove"),
    ("create", "delete"),
    ("enable", "disable"),
    ("open", "close"),
    ("start", "stop"),
    ("increase", "decrease"),
    ("buy", "sell"),
    ("upload", "download"),
    ("lock", "unlock"),
    ("include", "exclude"),
    ("maximum", "minimum"),
    ("highest", "lowest"),
    ("ascending", "descending"),
    ("before", "after"),
    ("activate", "deactivate"),
    ("send", "receive"),
    ("book", "cancel"),
    ("import", "export"),
    ("encrypt", "decrypt"),
    ("connect", "disconnect"),
    ("above", "below"),
)


def _core(text: str) -> str | None:
    """The imperative part of a one-sentence request starting with an action verb, else None."""
    text = text.strip()
    match = VERBS.match(text)
    if match is None or re.search(r"[.?!].", text):
        return None
    return text[0].lower() + text[1:].rstrip(".?! ")


def framed(texts: list[str], count: int, seed: int = 0) -> list[Pair]:
    """Requests with their framing changed: same task, so True."""
    rng = random.Random(seed)
    cores = [c for c in map(_core, texts) if c]
    pairs: list[Pair] = []
    for core in rng.sample(cores, min(count, len(cores))):
        a, b = rng.sample(FRAMES, 2)
        pairs.append((a.format(core), b.format(core), True))
    return pairs


def flipped(texts: list[str], count: int, seed: int = 0) -> tuple[list[Pair], list[Pair]]:
    """Requests with an action word replaced by its opposite, and with one number changed: False."""
    rng = random.Random(seed)
    opposite: list[Pair] = []
    number: list[Pair] = []
    for text in texts:
        for a, b in OPPOSITES:
            for x, y in ((a, b), (b, a)):
                pattern = re.compile(rf"\b{x}\b", re.IGNORECASE)
                if pattern.search(text):
                    swap = pattern.sub(
                        lambda m, y=y: y.capitalize() if m.group()[0].isupper() else y, text, 1
                    )
                    opposite.append((text, swap, False))
        digits = list(re.finditer(r"\b\d+\b", text))
        if digits:
            m = rng.choice(digits)
            number.append((text, text[: m.start()] + str(int(m.group()) + 1) + text[m.end() :], False))
    rng.shuffle(opposite)
    rng.shuffle(number)
    return opposite[:count], number[:count]
