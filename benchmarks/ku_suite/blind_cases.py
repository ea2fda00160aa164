# ruff: noqa: E501  (each case text kept whole on one line: an edited case shows in a diff)
"""Two blind knowledge-update sets, written by the session-31 lead for a check of how the
ranking generalises to cases written in styles ``cases.py`` has little of: facts about
third persons, an agent's notes ("User preference: ..."), terse key = value lines, an
update buried in a long sentence, a question in other words than the statement, and
three values in turn with no word of change. 42 + 34 cases, each the same shape as a
``cases.py`` update (one statement a session, the last one current), run by
``run.py --cases blind-a`` / ``blind-b`` with the same filler, times and judge.

How they were written: in one sitting on 2026-12-08, before any run on them. Set A was
then run once on main 714972b and its failures were read, so A is seen: a change judged
on A is fitted to it. Set B was written right after A's first run, before A's failures
were read, and frozen (``tests/test_benchmark_ku_blind.py`` checks its digest): run it
only to judge a finished change, and say in the note how often it has been run. Never
edit a case; write a new set instead.

Runs of set B so far (each in modes add, quick and ingest): main 714972b (32/34, 32/34,
28/34), and one rejected change (session 31's "a name the query asks about is the subject"
rule, branch ``s31-names-rule``: the same counts), judged by a rule written before B ran.
The ids of B's failures were printed; their texts were not studied.
"""

from __future__ import annotations

from typing import Any

SET_A_THIRD = [
    (
        "Alice works at Google as a designer.",
        "Alice joined Meta in March.",
        "Where does Alice work?",
    ),
    (
        "Bob's phone number is 555-0134.",
        "Bob has a new number: 555-0199.",
        "What is Bob's phone number?",
    ),
    (
        "Maria lives in Lisbon.",
        "Maria relocated to Porto for her new job.",
        "Where does Maria live?",
    ),
    (
        "The team lead for Project Atlas is Kenji.",
        "Project Atlas is now led by Farah.",
        "Who leads Project Atlas?",
    ),
    (
        "Dev's favourite restaurant is Nopi.",
        "Dev says Dishoom is his favourite place to eat these days.",
        "What is Dev's favourite restaurant?",
    ),
    (
        "Olga drives a Volvo.",
        "Olga sold the Volvo and bought a Tesla.",
        "What car does Olga drive?",
    ),
    (
        "The client contact at Acme is Jerome.",
        "Acme's contact for us is Linh from now on.",
        "Who is our contact at Acme?",
    ),
    (
        "Sam is allergic to peanuts.",
        "Sam's allergy test came back and it is shellfish, not peanuts.",
        "What is Sam allergic to?",
    ),
]

SET_A_AGENTNOTE = [
    (
        "User preference: replies in English.",
        "User preference updated: replies in German.",
        "Which language should replies be in?",
    ),
    (
        "User's preferred IDE is VS Code.",
        "Note: user moved to Neovim as their main editor.",
        "What editor does the user prefer?",
    ),
    (
        "User timezone: America/New_York.",
        "User timezone is Europe/Berlin since the move.",
        "What timezone is the user in?",
    ),
    (
        "The user wants weekly summaries on Mondays.",
        "The user asked for the summaries on Fridays instead.",
        "When should the weekly summary be sent?",
    ),
    (
        "User's budget for the trip is 2000 euros.",
        "User raised the trip budget to 3500 euros.",
        "What is the trip budget?",
    ),
    (
        "User is on the free plan.",
        "User upgraded to the Pro plan today.",
        "Which plan is the user on?",
    ),
    (
        "Preferred meeting length: 60 minutes.",
        "User now prefers 30-minute meetings.",
        "How long should meetings be?",
    ),
    (
        "The user's dog is called Biscuit.",
        "Correction: the dog's name is Pretzel, Biscuit was the cat.",
        "What is the user's dog called?",
    ),
]

SET_A_KV = [
    ("deploy target = staging", "deploy target = production", "What is the deploy target?"),
    ("db host: db1.internal", "db host: db7.internal", "Which database host do we use?"),
    ("release version 2.3.1", "release version 2.4.0", "What is the current release version?"),
    ("on-call engineer: Priyanka", "on-call engineer: Marcus", "Who is the on-call engineer?"),
    (
        "office wifi password: otter42",
        "office wifi password: heron77",
        "What is the office wifi password?",
    ),
    ("sprint goal: checkout redesign", "sprint goal: payment retries", "What is the sprint goal?"),
    ("max upload size 10 MB", "max upload size 25 MB", "What is the max upload size?"),
    ("support hours 9-17", "support hours 8-20", "What are the support hours?"),
]

SET_A_LONG = [
    (
        "I had a long week, the kids were sick, and anyway my car is a red Honda Civic that I've had for years.",
        "Big news after a chaotic month: I finally traded in the old Civic and now drive a blue Subaru Outback, which fits the dogs.",
        "What car do I drive?",
    ),
    (
        "Work has been busy; I'm a backend engineer at a fintech startup called Ledgerly, mostly doing Go.",
        "After the layoffs I landed a role as a platform engineer at Northwind Health, lots of Kubernetes.",
        "Where do I work?",
    ),
    (
        "We spent the weekend painting, and my partner and I have been renting a flat in Leeds for two years.",
        "The movers came on Saturday; we bought a small house in York and the flat in Leeds is handed back.",
        "Where do I live?",
    ),
    (
        "My doctor put me on 20 mg of atorvastatin after the checkup, which I take at night.",
        "At the follow-up the doctor lowered my atorvastatin dose to 10 mg because the numbers improved.",
        "What dose of atorvastatin do I take?",
    ),
    (
        "I coach my daughter's football team on Saturday mornings, which is chaotic but fun.",
        "The league moved all the games, so I coach the team on Sunday afternoons now.",
        "When do I coach the football team?",
    ),
    (
        "For the wedding we booked the Riverside Barn, deposit paid, date set for June.",
        "The Riverside Barn flooded so we had to rebook; the wedding is at Halden Manor now.",
        "Where is the wedding venue?",
    ),
]

SET_A_SYNONYM = [
    ("I commute by train.", "These days I ride my bike to the office.", "How do I travel to work?"),
    ("My salary is 65k.", "After the promotion I earn 78k.", "How much money do I make?"),
    ("I'm reading Dune.", "I finished Dune and started Piranesi.", "Which book am I on right now?"),
    (
        "I go running three times a week.",
        "My knee is bad so I swim instead of running now.",
        "What exercise do I do?",
    ),
    (
        "My landlord is Mr. Patel.",
        "The building was sold; Mrs. Novak owns it now.",
        "Who do I pay rent to?",
    ),
    (
        "I drink coffee every morning.",
        "I quit caffeine and have green tea in the mornings.",
        "What is my morning drink?",
    ),
]

SET_A_THREE = [
    (
        "The standup is at 9.",
        "The standup moved to 9:30.",
        "The standup is at 10 starting next week.",
        "What time is standup?",
    ),
    (
        "I'm using Jira for tasks.",
        "We tried Linear for tasks.",
        "We settled on Asana for tasks.",
        "Which task tracker do we use?",
    ),
    ("My manager is Helen.", "My manager is Omar.", "My manager is Yusuf.", "Who is my manager?"),
    (
        "Our office is on floor 3.",
        "Our office moved to floor 5.",
        "We're on floor 12 now.",
        "Which floor is our office on?",
    ),
    (
        "The launch is planned for May.",
        "The launch slipped to July.",
        "The launch is now set for September.",
        "When is the launch?",
    ),
    ("I weigh 82 kg.", "I weigh 79 kg.", "I weigh 76 kg.", "How much do I weigh?"),
]

SET_A: dict[str, list[tuple[str, ...]]] = {
    "third": SET_A_THIRD,
    "agentnote": SET_A_AGENTNOTE,
    "kv": SET_A_KV,
    "long": SET_A_LONG,
    "synonym": SET_A_SYNONYM,
    "three": SET_A_THREE,
}

SET_B_THIRD = [
    (
        "Tom teaches maths at Hillcrest High.",
        "Tom left Hillcrest and teaches physics at Oakwood Academy.",
        "What does Tom teach and where?",
    ),
    (
        "Nadia's flight lands at 14:05.",
        "Nadia's flight was delayed, it now lands at 17:40.",
        "When does Nadia's flight land?",
    ),
    (
        "Chen's birthday dinner is at Zuma.",
        "Chen changed the birthday dinner to Hakkasan.",
        "Where is Chen's birthday dinner?",
    ),
    (
        "Lucas plays bass in the band.",
        "Lucas switched to drums after our drummer quit.",
        "What does Lucas play in the band?",
    ),
    (
        "Grandma's care home is Willow Court.",
        "Grandma moved into Birchwood House last month.",
        "Which care home is grandma in?",
    ),
    ("Ravi is vegan.", "Ravi eats meat again since his trip to Argentina.", "What does Ravi eat?"),
    (
        "The vendor for our laptops is Dell.",
        "We buy the laptops from Lenovo now.",
        "Who supplies our laptops?",
    ),
    (
        "Emma's team uses Slack.",
        "Emma's team moved over to Microsoft Teams.",
        "What chat tool does Emma's team use?",
    ),
]

SET_B_AGENTNOTE = [
    (
        "User prefers dark mode.",
        "User switched the interface back to light mode.",
        "Which theme does the user prefer?",
    ),
    (
        "User's shipping address: 12 Elm Road, Bristol.",
        "User updated shipping address to 4 Canal Street, Manchester.",
        "Where should orders ship to?",
    ),
    (
        "User's notification setting: email only.",
        "User changed notifications to SMS only.",
        "How should the user be notified?",
    ),
    (
        "The user is training for a half marathon.",
        "The user signed up for a full marathon instead of the half.",
        "What race is the user training for?",
    ),
    (
        "User's preferred name: Jonathan.",
        "User asked to be called Jon from now on.",
        "What name should I use for the user?",
    ),
    (
        "User works remotely full time.",
        "User is back in the office three days a week.",
        "Does the user work remotely?",
    ),
]

SET_B_KV = [
    ("api rate limit: 100 req/min", "api rate limit: 250 req/min", "What is the API rate limit?"),
    (
        "backup schedule: nightly at 02:00",
        "backup schedule: every 6 hours",
        "What is the backup schedule?",
    ),
    ("primary region = eu-west-1", "primary region = eu-central-1", "Which region is primary?"),
    ("code freeze: 12 Nov", "code freeze: 19 Nov", "When is the code freeze?"),
    ("team size 7", "team size 11", "How big is the team?"),
    ("python version 3.10", "python version 3.12", "Which Python version do we run?"),
]

SET_B_LONG = [
    (
        "Between the renovation and the new puppy things are hectic, and I still bank with Barclays like my parents did.",
        "I got fed up with the fees, so after twenty years I closed the Barclays account and moved everything to Monzo.",
        "Which bank do I use?",
    ),
    (
        "The garden is finally done and my mum comes over every Sunday; oh, and I'm a nurse on the cardiology ward.",
        "I passed the exams and I'm now working as a nurse practitioner in the emergency department.",
        "What is my job?",
    ),
    (
        "Honestly the most stressful thing this year is the thesis, which is on coral bleaching in the Red Sea.",
        "My supervisor convinced me to change topic, so the thesis is now about kelp forests off Tasmania.",
        "What is my thesis about?",
    ),
    (
        "We keep arguing about holidays, but the plan for August is two weeks camping in Brittany.",
        "Plans changed again: in August we're doing a week in Crete, the camping trip is off.",
        "Where are we going in August?",
    ),
]

SET_B_SYNONYM = [
    (
        "I sleep at 11pm.",
        "I go to bed at 1am since the night shifts started.",
        "What time do I go to sleep?",
    ),
    (
        "My car insurer is Aviva.",
        "I renewed the car policy with Direct Line.",
        "Who insures my car?",
    ),
    (
        "I'm learning guitar.",
        "I gave the guitar up and take piano lessons.",
        "Which instrument am I learning?",
    ),
    ("We have two cats.", "One cat died, so we have one cat now.", "How many pets do we have?"),
    (
        "My rent is 1200 a month.",
        "The landlord put it up; I pay 1350 monthly now.",
        "How much is my rent?",
    ),
]

SET_B_THREE = [
    (
        "The offsite is in Madrid.",
        "The offsite is in Lisbon.",
        "The offsite will be in Porto.",
        "Where is the offsite?",
    ),
    (
        "My phone is an iPhone 12.",
        "My phone is a Pixel 7.",
        "My phone is a Galaxy S23.",
        "What phone do I have?",
    ),
    ("The budget is 40k.", "The budget is 55k.", "The budget is 48k.", "What is the budget?"),
    (
        "I'm on the blue team.",
        "I'm on the green team.",
        "I'm on the red team.",
        "Which team am I on?",
    ),
    (
        "The demo is on Tuesday.",
        "The demo is on Thursday.",
        "The demo is on Monday.",
        "When is the demo?",
    ),
]

SET_B: dict[str, list[tuple[str, ...]]] = {
    "third": SET_B_THIRD,
    "agentnote": SET_B_AGENTNOTE,
    "kv": SET_B_KV,
    "long": SET_B_LONG,
    "synonym": SET_B_SYNONYM,
    "three": SET_B_THREE,
}

SETS = {"blind-a": SET_A, "blind-b": SET_B}


def build_blind(name: str) -> list[dict[str, Any]]:
    """The cases of set ``name`` (``SETS``) as ``cases.build_cases`` makes them (every one a
    test case: none is for tuning)."""
    out: list[dict[str, Any]] = []
    for kind, rows in SETS[name].items():
        for n, row in enumerate(rows, 1):
            *steps, question = row
            out.append(
                {
                    "id": f"{name}-{kind}-{n}",
                    "category": kind,
                    "split": "test",
                    "sessions": [[("user", s, True)] for s in steps],
                    "question": question,
                    "answer": len(steps) - 1,
                }
            )
    return out
