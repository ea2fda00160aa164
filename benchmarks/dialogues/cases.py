# ruff: noqa: E501  (dialogue lines are data, kept one turn per line)
"""A small conversation set of the team's own, to check that a recall change is not fitted to LoCoMo dev.

How it was written: by one engineer (session 7, issue 17) in one sitting, before any
ranking change of that session was tried on it, without looking at LoCoMo questions
while writing. Four multi-session dialogues between two people (or a person and an
assistant), each session dated, with small talk between the facts; then questions a
later reader might ask, each with the turns that hold the answer (evidence, as
``"S<session>:<turn>"``, turns numbered from 1 within a session). The questions mix
kinds on purpose: a fact stated once; a fact that is the *answer* to a question the
other speaker asked (the question turn holds the topic words, the answer holds the
fact); "when" questions whose answer is a relative date ("last Saturday"); questions
naming a person who is not a speaker; facts that changed later (the question asks for
the present, the evidence is the newer statement); and questions that share few words
with the evidence. It was never tuned on: a change is kept only if it helps or does
not hurt here as well as on LoCoMo dev.
"""

from __future__ import annotations

from typing import Any

# (speaker, text) per turn; sessions are (iso time, turns)
Dialogue = dict[str, Any]

MARTA_JONAS: Dialogue = {
    "id": "marta-jonas",
    "sessions": [
        (
            "2024-03-03T18:10:00+00:00",
            [
                ("Marta", "Hey Jonas! Long time. How have you been?"),
                ("Jonas", "Tired, honestly. Biscuit has been sick all week and I barely slept."),
                ("Marta", "Oh no, poor thing. What's wrong with him?"),
                ("Jonas", "He keeps scratching until his skin bleeds. The vet ran some tests."),
                ("Marta", "I hope it's nothing serious. Keep me posted."),
                ("Jonas", "I will. Anyway, what's new with you?"),
                (
                    "Marta",
                    "I signed up for a pottery class on Thursday evenings. First one was two days ago!",
                ),
                ("Jonas", "No way, you always said you wanted to try the wheel."),
                ("Marta", "It's harder than it looks. Everything I made collapsed."),
                ("Jonas", "Ha, that's how it starts. I still burn half the loaves at the bakery."),
                ("Marta", "Are you still doing the early shifts there?"),
                ("Jonas", "Four in the morning, five days a week. The sourdough doesn't wait."),
                ("Marta", "Respect. Oh, and I booked flights to Lisbon for the middle of May."),
                ("Jonas", "Lisbon in spring sounds perfect. Eat a custard tart for me."),
            ],
        ),
        (
            "2024-03-20T20:30:00+00:00",
            [
                ("Jonas", "Good news: the tests came back and it's an allergy, not an infection."),
                ("Marta", "That's a relief! Allergic to what?"),
                (
                    "Jonas",
                    "Chicken, of all things. He's on a fish diet now and already scratching less.",
                ),
                ("Marta", "Happy to hear that. Give him a cuddle from me."),
                (
                    "Marta",
                    "My first bowl came out of the kiln yesterday... with a crack right through the base.",
                ),
                ("Jonas", "Ouch. Can you still use it?"),
                ("Marta", "Only for paper clips. The teacher said I trapped an air bubble."),
                ("Jonas", "Big family news here: my sister Ida is getting married in June."),
                ("Marta", "Congratulations to her! Who's the lucky one?"),
                (
                    "Jonas",
                    "Her partner Farid, they met climbing. The wedding will be at a farm near Ghent.",
                ),
                ("Marta", "That sounds lovely. What are you reading these days, by the way?"),
                (
                    "Jonas",
                    "A thick novel about trees, The Overstory. It makes me want to plant a forest.",
                ),
                ("Marta", "I loved that one. The chapter about the chestnut made me cry."),
            ],
        ),
        (
            "2024-05-28T12:05:00+00:00",
            [
                ("Marta", "I'm back! Lisbon was wonderful, I already miss it."),
                ("Jonas", "Welcome home! What was the highlight?"),
                (
                    "Marta",
                    "Riding the old yellow tram 28 up to the castle, squeezed between tourists.",
                ),
                ("Jonas", "And the custard tarts?"),
                ("Marta", "I ate six pasteis de nata in Belem in one afternoon. No regrets."),
                ("Jonas", "Legend. I have news too: I left the bakery last week."),
                ("Marta", "What? You loved that place!"),
                (
                    "Jonas",
                    "I loved the bread, not the four a.m. alarm. I'm roasting coffee now at a small roastery in the harbour.",
                ),
                ("Marta", "That suits you. Do you get free coffee?"),
                ("Jonas", "All I can drink, which is becoming a problem."),
                ("Marta", "How are the wedding preparations going?"),
                (
                    "Jonas",
                    "Ida found her dress, green silk. My mother is panicking about the seating plan.",
                ),
            ],
        ),
        (
            "2024-07-02T19:45:00+00:00",
            [
                ("Marta", "So, how was the big day?"),
                (
                    "Jonas",
                    "Perfect. Ida and Farid got married last Saturday, and it only rained during dinner.",
                ),
                ("Marta", "Rain at a wedding is lucky, they say."),
                ("Jonas", "Farid's grandmother danced until two in the morning. She's ninety."),
                ("Marta", "Amazing. I have a small victory of my own."),
                ("Jonas", "Tell me!"),
                (
                    "Marta",
                    "I sold my first vase at the Sunday craft market. A blue one, for twenty euros.",
                ),
                ("Jonas", "A professional potter now! Frame the first banknote."),
                ("Marta", "How's Biscuit doing with the new food?"),
                (
                    "Jonas",
                    "Great, his coat is shiny again. I'm even thinking of adopting a second dog from the shelter.",
                ),
                ("Marta", "Biscuit would love a friend."),
            ],
        ),
    ],
    "questions": [
        ("What health problem does Jonas's dog have?", ["S1:4", "S2:1", "S2:3"]),
        ("What is Biscuit allergic to?", ["S2:3"]),
        ("When did Marta start her pottery class?", ["S1:7"]),
        ("What happened to the first bowl Marta made?", ["S2:5"]),
        ("Which book is Jonas reading?", ["S2:12"]),
        ("Who is Ida marrying?", ["S2:10"]),
        ("When did Ida get married?", ["S4:2"]),
        ("Where does Jonas work now?", ["S3:8"]),
        ("How did Marta get up to the castle in Lisbon?", ["S3:3"]),
        ("How many pastries did Marta eat in Belem?", ["S3:5"]),
        ("What colour is the wedding dress?", ["S3:12"]),
        ("What did Marta sell at the market and for how much?", ["S4:7"]),
        ("Is Jonas planning to get another pet?", ["S4:10"]),
        ("How old is Farid's grandmother?", ["S4:4"]),
    ],
}

PRIYA_ASSISTANT: Dialogue = {
    "id": "priya-assistant",
    "sessions": [
        (
            "2024-09-02T08:00:00+00:00",
            [
                (
                    "Priya",
                    "Morning. I want to run a half marathon before the end of the year. Can you help me plan?",
                ),
                ("Assistant", "Gladly. How far can you run comfortably right now?"),
                ("Priya", "About five kilometres, slowly. Maybe thirty-five minutes."),
                (
                    "Assistant",
                    "Then a twelve-week plan with three runs a week is realistic. Any race in mind?",
                ),
                ("Priya", "The Riverside Half on the seventh of December."),
                (
                    "Assistant",
                    "Good choice, it is flat. Do you have any injuries I should know about?",
                ),
                (
                    "Priya",
                    "My left knee hurts on stairs sometimes, since a ski fall two winters ago.",
                ),
                ("Assistant", "Then we add strength work twice a week and avoid downhill repeats."),
                (
                    "Priya",
                    "Sounds good. Also, unrelated: remind me that my passport expires in February.",
                ),
                (
                    "Assistant",
                    "Noted: passport expires in February; renew it well before any trip.",
                ),
            ],
        ),
        (
            "2024-10-01T07:30:00+00:00",
            [
                ("Priya", "Update: I ran my first ten kilometres yesterday without stopping!"),
                ("Assistant", "Excellent progress. How did the knee feel?"),
                (
                    "Priya",
                    "Fine on flat ground, a bit stiff after. The physio gave me an elastic band routine.",
                ),
                ("Assistant", "Keep doing it after every run. What shoes are you using?"),
                ("Priya", "Old trail shoes from my sister, a size too big."),
                (
                    "Assistant",
                    "A proper road shoe in your size would help your knee. A running shop can check your stride.",
                ),
                (
                    "Priya",
                    "Fine, I'll go this weekend. Different topic: we're adopting a cat next month.",
                ),
                ("Assistant", "How exciting. Do you have a name yet?"),
                ("Priya", "My partner wants Miso, I want Pepper. We'll see who wins."),
            ],
        ),
        (
            "2024-10-29T19:00:00+00:00",
            [
                (
                    "Priya",
                    "Bought the shoes: grey Brooks Ghost, half a size up from my normal shoes.",
                ),
                ("Assistant", "Great. Break them in on short runs first."),
                ("Priya", "The cat arrived on Saturday. Miso won, obviously."),
                ("Assistant", "Congratulations on Miso! How is she settling in?"),
                ("Priya", "She sleeps on my running clothes, so I'm always late for training."),
                ("Assistant", "A fair trade. How long was your last long run?"),
                ("Priya", "Sixteen kilometres along the canal, in one hour forty-five."),
                ("Assistant", "You're on track for the race. Let's taper in the last two weeks."),
                (
                    "Priya",
                    "One worry: my work is sending me to Singapore in late November for a week.",
                ),
                ("Assistant", "Run early in the morning there, before the heat, and keep it easy."),
            ],
        ),
        (
            "2024-12-09T21:00:00+00:00",
            [
                (
                    "Priya",
                    "I did it! Finished the Riverside Half on Saturday in two hours and four minutes.",
                ),
                ("Assistant", "Congratulations! How did the knee hold up?"),
                ("Priya", "No pain at all, the band exercises really worked."),
                ("Assistant", "Wonderful. What's next?"),
                (
                    "Priya",
                    "Rest, then maybe a trail race in spring. And I must finally renew my passport.",
                ),
                ("Assistant", "It expires in February, so apply this month."),
            ],
        ),
    ],
    "questions": [
        ("Which race is Priya training for?", ["S1:5"]),
        ("When is the Riverside Half?", ["S1:5"]),
        ("Why does Priya's knee hurt?", ["S1:7"]),
        ("When does Priya's passport expire?", ["S1:9", "S4:6"]),
        ("What did the physio give her?", ["S2:3"]),
        ("What shoes did Priya buy?", ["S3:1"]),
        ("What is the cat's name?", ["S2:9", "S3:3"]),
        ("How far was Priya's longest training run?", ["S3:7"]),
        ("Where is Priya travelling for work?", ["S3:9"]),
        ("What was Priya's finishing time?", ["S4:1"]),
        ("How far could she run when she started training?", ["S1:3"]),
        ("What does the cat do that makes Priya late?", ["S3:5"]),
    ],
}

TOMASZ_ELENA: Dialogue = {
    "id": "tomasz-elena",
    "sessions": [
        (
            "2023-11-14T12:30:00+00:00",
            [
                (
                    "Elena",
                    "Did you see the email about the warehouse project? The deadline moved to January.",
                ),
                (
                    "Tomasz",
                    "I did. Honestly a relief, the supplier is three weeks late with the sensors.",
                ),
                ("Elena", "Which supplier again?"),
                ("Tomasz", "Kestrel Devices from Gdansk. Nice people, terrible logistics."),
                ("Elena", "Let's ask Bruno to call them, he speaks their language in every sense."),
                ("Tomasz", "Good idea. By the way, I started Spanish lessons on Monday nights."),
                ("Elena", "Why Spanish?"),
                (
                    "Tomasz",
                    "My girlfriend's family is from Valencia and her grandmother speaks no English.",
                ),
                (
                    "Elena",
                    "That's sweet. My son starts at a new school next week, so I'll be leaving early on Tuesdays.",
                ),
                ("Tomasz", "No problem. Which school?"),
                ("Elena", "Hillside Primary, the one with the big vegetable garden."),
            ],
        ),
        (
            "2023-12-12T09:15:00+00:00",
            [
                ("Tomasz", "The sensors finally arrived this morning, forty boxes."),
                ("Elena", "Finally! Did Bruno's call help?"),
                ("Tomasz", "He got us a discount of eight percent for the delay."),
                ("Elena", "Bruno is a hero. How's the Spanish going?"),
                ("Tomasz", "Slowly. I can order food and talk about the weather, that's it."),
                (
                    "Elena",
                    "That's more than most people. We're moving flats in February, by the way.",
                ),
                ("Tomasz", "Where to?"),
                (
                    "Elena",
                    "Closer to Hillside, a third-floor flat with a balcony on Linden Street.",
                ),
                ("Tomasz", "If you need someone to carry boxes, I have strong arms and a van."),
            ],
        ),
        (
            "2024-02-20T16:40:00+00:00",
            [
                ("Elena", "Thanks again for helping with the move on Saturday. Your van saved us."),
                ("Tomasz", "Any time. Is the balcony as nice as you hoped?"),
                (
                    "Elena",
                    "Better. My son already planted tomatoes in pots out there, like at school.",
                ),
                (
                    "Tomasz",
                    "Speaking of growing things, the warehouse project went live last Friday.",
                ),
                ("Elena", "Finally. Any problems?"),
                (
                    "Tomasz",
                    "Two sensors report the freezer at minus ninety, so they're lying. Kestrel is sending replacements.",
                ),
                ("Elena", "Typical. And the Spanish?"),
                (
                    "Tomasz",
                    "I had a full conversation with the grandmother over Christmas. She laughed at my accent but understood.",
                ),
                ("Elena", "That must have felt great."),
                ("Tomasz", "It did. She taught me to make paella the proper way, no chorizo."),
            ],
        ),
    ],
    "questions": [
        ("Who supplies the sensors for the warehouse project?", ["S1:4"]),
        ("Why is Tomasz learning Spanish?", ["S1:8"]),
        ("Which school does Elena's son go to?", ["S1:11"]),
        ("What discount did Bruno get?", ["S2:3"]),
        ("Where is Elena's new flat?", ["S2:8"]),
        ("When did Elena move?", ["S3:1"]),
        ("What does Elena's son grow on the balcony?", ["S3:3"]),
        ("When did the warehouse project go live?", ["S3:4"]),
        ("What is wrong with the sensors?", ["S3:6"]),
        ("What did the grandmother teach Tomasz?", ["S3:10"]),
        ("How many boxes of sensors arrived?", ["S2:1"]),
    ],
}

DIALOGUES: tuple[Dialogue, ...] = (MARTA_JONAS, PRIYA_ASSISTANT, TOMASZ_ELENA)
