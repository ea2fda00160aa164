"""The knowledge-update suite of issue 17: 225 cases, written for it by hand.

How it was written: one author (the issue-17 helper), in one sitting, before any
ranking change was tried on it, as plain sentences a person says to an assistant
about their own life, work and plans. Nine kinds of update, 25 cases each; no
case was edited after the first measurement. The split into dev (tune on it)
and test (report only) is fixed by a hash of the case id (``split`` below), made
once, so neither the author nor a later tuner picks which cases are held out.

Each kind is a list of tuples; ``build_cases`` turns them into dicts of
``sessions`` (a list of sessions, each a list of (speaker, text) statements that
belong to the case), ``question`` and ``category``. The last statement of the
case is the current one; every earlier one is stale. Unrelated filler facts are
added by the runner from ``FILLER`` (three per session).
"""

from __future__ import annotations

import hashlib
from typing import Any

# two sessions, the newer one says the change in so many words ("switched", "no longer")
CUE = [
    (
        "I use Dropbox for all my files.",
        "I switched from Dropbox to Google Drive last week.",
        "Where do I keep my files?",
    ),
    (
        "I'm a vegetarian.",
        "I'm no longer vegetarian, I started eating fish again.",
        "What is my diet?",
    ),
    (
        "My manager is Priya.",
        "Priya left the company, so my manager is now Tomasz.",
        "Who is my manager?",
    ),
    (
        "I take the bus to work.",
        "I stopped taking the bus and cycle to work instead.",
        "How do I get to work?",
    ),
    (
        "My gym is the Fitness First on Baker Street.",
        "I cancelled Fitness First and joined the climbing gym in Hackney.",
        "Which gym do I go to?",
    ),
    (
        "I play the violin in a quartet.",
        "I quit the quartet; these days I play cello in an orchestra.",
        "What instrument do I play?",
    ),
    (
        "I'm learning Spanish.",
        "I've given up Spanish and moved on to learning Japanese.",
        "Which language am I learning?",
    ),
    (
        "My dentist is Dr. Okafor.",
        "I changed dentists, I now see Dr. Lindqvist.",
        "Who is my dentist?",
    ),
    (
        "I work the night shift at the hospital.",
        "I was moved to the day shift at the hospital.",
        "Which shift do I work?",
    ),
    ("Our standup is at 9:30.", "We rescheduled the standup to 10:15.", "When is our standup?"),
    (
        "My email provider is Yahoo.",
        "I finally replaced Yahoo with Fastmail.",
        "Which email service do I use?",
    ),
    (
        "I live with two roommates.",
        "Both roommates moved out, I live alone now.",
        "Who do I live with?",
    ),
    (
        "I drink black coffee every morning.",
        "I switched to green tea in the mornings instead of coffee.",
        "What do I drink in the morning?",
    ),
    (
        "The project deadline is March 3.",
        "The deadline was postponed to April 20.",
        "When is the project deadline?",
    ),
    (
        "I bank with Barclays.",
        "I moved my accounts from Barclays to Monzo.",
        "Which bank am I with?",
    ),
    (
        "My daughter goes to Hillside Primary.",
        "My daughter transferred to Oakwood Academy.",
        "Which school does my daughter attend?",
    ),
    (
        "I use an Android phone.",
        "I upgraded to an iPhone 15 and sold the Android.",
        "What phone do I use?",
    ),
    (
        "My book club meets on Tuesdays.",
        "The book club changed its meetings to Thursdays.",
        "When does my book club meet?",
    ),
    (
        "I'm on the basic broadband plan.",
        "I upgraded my broadband to the gigabit plan.",
        "Which broadband plan am I on?",
    ),
    (
        "My favourite band is Radiohead.",
        "These days my favourite band is Fontaines D.C., not Radiohead anymore.",
        "What's my favourite band?",
    ),
    (
        "I'm renting a flat in Leeds.",
        "I relocated to Manchester and rent a flat there now.",
        "Where am I renting?",
    ),
    (
        "Our team uses Jira for tickets.",
        "We dropped Jira and track tickets in Linear now.",
        "What do we use for tickets?",
    ),
    (
        "My son plays football on Saturdays.",
        "My son stopped football and does judo on Saturdays now.",
        "What does my son do on Saturdays?",
    ),
    (
        "I'm allergic to penicillin, so I take erythromycin.",
        "My doctor replaced erythromycin with azithromycin.",
        "Which antibiotic do I take?",
    ),
    (
        "I volunteer at the food bank.",
        "I no longer volunteer at the food bank; I help at the library now.",
        "Where do I volunteer?",
    ),
]

# two sessions, the newer one simply states the new value: no cue word at all
NOCUE = [
    ("My car is a blue Ford Focus.", "My car is a grey Skoda Octavia.", "What car do I have?"),
    (
        "I work at Deloitte as an auditor.",
        "I work at a startup called Brightwave as a data analyst.",
        "Where do I work?",
    ),
    ("My partner's name is Sam.", "My partner's name is Jordan.", "What is my partner called?"),
    ("My favourite food is lasagne.", "My favourite food is ramen.", "What food do I like best?"),
    (
        "I go running at 6 in the morning.",
        "I go running at 7 in the evening.",
        "When do I go running?",
    ),
    ("My laptop is a MacBook Air.", "My laptop is a Framework 13.", "Which laptop do I use?"),
    ("My cat is called Biscuit.", "Our cat is called Pepper.", "What's the cat's name?"),
    ("I support Arsenal.", "I support Tottenham.", "Which football club do I support?"),
    (
        "I sleep on the left side of the bed.",
        "I sleep on the right side of the bed.",
        "Which side of the bed do I sleep on?",
    ),
    (
        "The Wi-Fi password is sunflower42.",
        "The Wi-Fi password is maplebridge7.",
        "What is the Wi-Fi password?",
    ),
    (
        "My doctor's surgery is on Elm Road.",
        "My doctor's surgery is at the Riverside health centre.",
        "Where is my doctor's surgery?",
    ),
    (
        "I teach maths at a secondary school.",
        "I teach physics at a sixth-form college.",
        "What do I teach?",
    ),
    ("My best friend is Chloe.", "My best friend is Aisha.", "Who is my best friend?"),
    (
        "Our office is on the fourth floor.",
        "Our office is on the eleventh floor.",
        "Which floor is our office on?",
    ),
    (
        "I play tennis on Wednesdays.",
        "I play squash on Wednesdays.",
        "What sport do I play on Wednesdays?",
    ),
    ("My main editor is Sublime Text.", "My main editor is Neovim.", "Which editor do I use?"),
    ("I drink oat milk.", "I drink almond milk.", "Which milk do I drink?"),
    (
        "My username on the forum is quietfox.",
        "My username on the forum is northern_lights.",
        "What is my forum username?",
    ),
    (
        "My train leaves from Platform 2.",
        "My train leaves from Platform 9.",
        "Which platform does my train leave from?",
    ),
    ("My hairdresser is Marco.", "My hairdresser is Ines.", "Who cuts my hair?"),
    (
        "Our wedding anniversary dinner is at Bistro Lune.",
        "Our wedding anniversary dinner is at The Copper Pot.",
        "Where is our anniversary dinner?",
    ),
    ("I'm reading War and Peace.", "I'm reading Piranesi.", "What book am I reading?"),
    ("My shoe size is 9.", "My shoe size is 10.", "What size shoes do I wear?"),
    ("My home airport is Gatwick.", "My home airport is Stansted.", "Which airport do I fly from?"),
    ("The kids' bedtime is 8 pm.", "The kids' bedtime is 7:30 pm.", "When do the kids go to bed?"),
]

# two sessions, a number changes (with or without a cue)
NUMERIC = [
    ("I have 3 cats.", "We have 4 cats since we adopted a kitten.", "How many cats do I have?"),
    (
        "My resting heart rate is 72.",
        "My resting heart rate is 61.",
        "What's my resting heart rate?",
    ),
    (
        "I earn 42,000 pounds a year.",
        "I earn 51,500 pounds a year after the raise.",
        "How much do I earn?",
    ),
    (
        "My daily step goal is 8,000.",
        "I raised my daily step goal to 12,000.",
        "What is my step goal?",
    ),
    (
        "My mortgage rate is 4.2 percent.",
        "My mortgage rate is 5.1 percent after the remortgage.",
        "What interest rate is my mortgage?",
    ),
    ("I'm 34 years old.", "I just turned 35.", "How old am I?"),
    ("My team has 6 engineers.", "My team has 9 engineers.", "How big is my team?"),
    (
        "I read about 20 pages a day.",
        "I read about 50 pages a day.",
        "How much do I read each day?",
    ),
    (
        "Our flat is 58 square metres.",
        "Our new flat is 85 square metres.",
        "How large is our flat?",
    ),
    (
        "I pay 15 dollars a month for Netflix.",
        "Netflix costs me 23 dollars a month.",
        "What do I pay for Netflix?",
    ),
    (
        "My blood pressure was 140 over 90.",
        "My blood pressure is 122 over 80.",
        "What is my blood pressure?",
    ),
    (
        "I have 12 days of holiday left.",
        "I have 4 days of holiday left.",
        "How many holiday days do I have?",
    ),
    (
        "My commute is 25 miles each way.",
        "My commute is 6 miles each way.",
        "How long is my commute?",
    ),
    (
        "I drink 4 cups of coffee a day.",
        "I drink 1 cup of coffee a day.",
        "How many coffees do I have daily?",
    ),
    ("Our rent is 900 euros.", "Our rent is 1,040 euros.", "How much rent do we pay?"),
    ("My 5k time is 28 minutes.", "My 5k time is 24 minutes.", "How fast do I run 5k?"),
    (
        "The thermostat is set to 21 degrees.",
        "The thermostat is set to 19 degrees.",
        "What temperature is the thermostat on?",
    ),
    ("My credit limit is 2,000.", "My credit limit is 3,500.", "What is my credit limit?"),
    (
        "I sleep about 6 hours a night.",
        "I sleep about 8 hours a night.",
        "How much sleep do I get?",
    ),
    (
        "I'm on 20 mg of the statin.",
        "The doctor put me on 40 mg of the statin.",
        "What dose of the statin do I take?",
    ),
    (
        "We have 2 kids.",
        "We have 3 kids now, the baby arrived in May.",
        "How many children do we have?",
    ),
    (
        "My phone plan includes 10 GB of data.",
        "My phone plan includes 30 GB of data.",
        "How much data does my plan have?",
    ),
    ("I weigh 90 kilos.", "I weigh 83 kilos.", "How much do I weigh?"),
    (
        "The gym membership is 35 a month.",
        "The gym membership is 42 a month.",
        "What does the gym cost per month?",
    ),
    ("I'm in seat 14C.", "I'm in seat 31A.", "Which seat am I in?"),
]

# three sessions: A, then B, then back to A (the oldest and the newest agree)
REVERSAL = [
    (
        "I work from home.",
        "I work from the office every day now.",
        "I'm back to working from home.",
        "Where do I work from?",
    ),
    (
        "I'm single.",
        "I'm seeing someone called Leo.",
        "Leo and I broke up, I'm single again.",
        "What's my relationship status?",
    ),
    (
        "I'm a morning person and train before work.",
        "I train after work in the evenings.",
        "I train before work in the mornings again.",
        "When do I train?",
    ),
    (
        "My phone is on the Vodafone network.",
        "I moved my number to EE.",
        "I went back to Vodafone.",
        "Which mobile network am I on?",
    ),
    ("I eat meat.", "I'm vegan now.", "I eat meat again.", "What do I eat?"),
    (
        "Our team lead is Anna.",
        "Our team lead is Ben while Anna is on leave.",
        "Anna is our team lead again.",
        "Who leads our team?",
    ),
    (
        "I use Windows at home.",
        "I installed Linux at home.",
        "I went back to Windows at home.",
        "Which operating system do I use at home?",
    ),
    (
        "I take sugar in my tea.",
        "I stopped taking sugar in my tea.",
        "I take sugar in my tea again.",
        "How do I take my tea?",
    ),
    (
        "My desk is by the window.",
        "My desk was moved next to the kitchen.",
        "My desk is by the window again.",
        "Where is my desk?",
    ),
    (
        "I'm employed at the council.",
        "I'm freelancing.",
        "I'm employed at the council again.",
        "What is my employment situation?",
    ),
    ("I have short hair.", "I grew my hair long.", "I cut my hair short again.", "How is my hair?"),
    (
        "The meeting is in Room A.",
        "The meeting is in Room C.",
        "The meeting is in Room A after all.",
        "Which room is the meeting in?",
    ),
    (
        "My favourite season is autumn.",
        "My favourite season is summer.",
        "My favourite season is autumn.",
        "Which season do I like most?",
    ),
    ("I commute by train.", "I commute by car.", "I commute by train.", "How do I commute?"),
    (
        "Our dog sleeps in the kitchen.",
        "Our dog sleeps in our bedroom.",
        "Our dog sleeps in the kitchen.",
        "Where does the dog sleep?",
    ),
    (
        "I prefer window seats.",
        "I prefer aisle seats.",
        "I prefer window seats.",
        "Which seat do I like on planes?",
    ),
    (
        "I invoice clients monthly.",
        "I invoice clients weekly.",
        "I invoice clients monthly.",
        "How often do I invoice clients?",
    ),
    (
        "My password manager is Bitwarden.",
        "My password manager is 1Password.",
        "My password manager is Bitwarden.",
        "Which password manager do I use?",
    ),
    (
        "I study at the university library.",
        "I study in a cafe near home.",
        "I study at the university library.",
        "Where do I study?",
    ),
    (
        "I'm on the board of the residents' association.",
        "I stepped down from the residents' association board.",
        "I rejoined the board of the residents' association.",
        "Am I on the residents' association board?",
    ),
    ("I shop at Tesco.", "I shop at Aldi.", "I shop at Tesco.", "Which supermarket do I use?"),
    (
        "The car is parked in the garage.",
        "The car is parked on the street.",
        "The car is parked in the garage.",
        "Where is the car parked?",
    ),
    (
        "I write in English at work.",
        "I write in German at work.",
        "I write in English at work.",
        "Which language do I write in at work?",
    ),
    (
        "My daughter wants to be a vet.",
        "My daughter wants to be an astronaut.",
        "My daughter wants to be a vet.",
        "What does my daughter want to be?",
    ),
    (
        "I play bass in the band.",
        "I play drums in the band.",
        "I play bass in the band.",
        "What do I play in the band?",
    ),
]

# three sessions: A, then B, then C
CHAIN = [
    ("I live in Bristol.", "I moved to Cardiff.", "Now I live in Swansea.", "Where do I live?"),
    (
        "I drive a Fiat Panda.",
        "I bought a Toyota Yaris.",
        "I traded the Yaris for a Kia EV6.",
        "What do I drive?",
    ),
    (
        "I'm a junior developer.",
        "I got promoted to senior developer.",
        "I'm a staff engineer now.",
        "What is my job title?",
    ),
    (
        "My flight is on Monday.",
        "My flight moved to Wednesday.",
        "My flight is now on Friday.",
        "When is my flight?",
    ),
    (
        "I'm reading Dune.",
        "I'm reading Middlemarch.",
        "I'm reading The Overstory.",
        "Which book am I on?",
    ),
    (
        "I take 10 mg of melatonin.",
        "I take 5 mg of melatonin.",
        "I take 3 mg of melatonin.",
        "How much melatonin do I take?",
    ),
    (
        "The launch is planned for June.",
        "The launch slipped to August.",
        "The launch is set for October.",
        "When is the launch?",
    ),
    (
        "Our budget is 50,000.",
        "Our budget is 65,000.",
        "Our budget is 80,000.",
        "What is our budget?",
    ),
    (
        "My running club meets at the park.",
        "My running club meets at the stadium.",
        "My running club meets at the canal towpath.",
        "Where does my running club meet?",
    ),
    (
        "My daughter is in year 3.",
        "My daughter is in year 4.",
        "My daughter is in year 5.",
        "Which year is my daughter in?",
    ),
    (
        "My favourite coffee shop is Grind.",
        "My favourite coffee shop is Ozone.",
        "My favourite coffee shop is Kiln.",
        "Which coffee shop do I like best?",
    ),
    (
        "I work 40 hours a week.",
        "I work 32 hours a week.",
        "I work 24 hours a week.",
        "How many hours do I work?",
    ),
    (
        "I use Slack at work.",
        "We moved to Microsoft Teams.",
        "We're on Zulip now.",
        "What chat tool do we use at work?",
    ),
    (
        "My landlord is Mr. Patel.",
        "The flat was sold and my landlord is Mrs. Greene.",
        "My landlord is a company called Homelet.",
        "Who is my landlord?",
    ),
    (
        "The office opens at 8.",
        "The office opens at 8:30.",
        "The office opens at 9.",
        "When does the office open?",
    ),
    (
        "My piano teacher is Mrs. Ito.",
        "My piano teacher is Mr. Brandt.",
        "My piano teacher is Ms. Osei.",
        "Who teaches me piano?",
    ),
    (
        "I'm saving for a new bike.",
        "I'm saving for a holiday in Portugal.",
        "I'm saving for a house deposit.",
        "What am I saving for?",
    ),
    (
        "My broadband provider is BT.",
        "My broadband provider is Sky.",
        "My broadband provider is Hyperoptic.",
        "Who provides my broadband?",
    ),
    ("I wake up at 6.", "I wake up at 6:45.", "I wake up at 5:30.", "What time do I wake up?"),
    (
        "Our sprint is two weeks.",
        "Our sprint is three weeks.",
        "Our sprint is one week.",
        "How long is our sprint?",
    ),
    (
        "My phone case is red.",
        "My phone case is green.",
        "My phone case is black.",
        "What colour is my phone case?",
    ),
    (
        "The conference is in Lisbon.",
        "The conference is in Porto.",
        "The conference is in Madrid.",
        "Where is the conference?",
    ),
    (
        "I'm on chapter 2 of my thesis.",
        "I'm on chapter 4 of my thesis.",
        "I'm on chapter 6 of my thesis.",
        "Which chapter of my thesis am I writing?",
    ),
    (
        "My son's teacher is Mr. Hale.",
        "My son's teacher is Ms. Rahman.",
        "My son's teacher is Mrs. Doyle.",
        "Who is my son's teacher?",
    ),
    ("I weigh 70 kilos.", "I weigh 73 kilos.", "I weigh 76 kilos.", "What is my weight?"),
]

# the user states a fact; in a later session the assistant states the change
ASSISTANT = [
    (
        "My dentist appointment is on Tuesday at 10.",
        "I've rebooked your dentist appointment: it is now on Thursday at 3 pm.",
        "When is my dentist appointment?",
    ),
    (
        "My hotel in Rome is the Hotel Artemide.",
        "Your booking moved to the Hotel Raphael, since the Artemide was full.",
        "Which hotel am I staying at in Rome?",
    ),
    (
        "My subscription is the monthly plan.",
        "Done: your subscription is now the annual plan.",
        "Which subscription plan am I on?",
    ),
    (
        "The team offsite is in Brighton.",
        "Update from the organisers: the offsite will be held in Oxford.",
        "Where is the team offsite?",
    ),
    (
        "My train to York is at 8:05.",
        "Your 8:05 was cancelled; I've put you on the 9:35 to York.",
        "What time is my train to York?",
    ),
    (
        "My delivery address is 4 Mill Lane.",
        "I've changed your delivery address to 27 Harbour Street.",
        "Where do my deliveries go?",
    ),
    (
        "My insurance is with Aviva.",
        "As you asked, your insurance has been switched to Direct Line.",
        "Who insures me?",
    ),
    (
        "My table at the restaurant is for 4 people.",
        "The restaurant confirmed the table is now for 6 people.",
        "How many people is my table for?",
    ),
    (
        "My appointment with the physio is at the Park clinic.",
        "Your physio session will be at the Northgate clinic instead.",
        "Where is my physio appointment?",
    ),
    (
        "My car service is booked for the 12th.",
        "The garage moved your car service to the 19th.",
        "When is my car service?",
    ),
    (
        "My password reset email goes to my work address.",
        "Your recovery email is now your personal Gmail address.",
        "Which email gets my password resets?",
    ),
    (
        "My monthly budget for groceries is 300.",
        "I've set your grocery budget to 380 a month, as discussed.",
        "What is my grocery budget?",
    ),
    (
        "My flight is in economy.",
        "You've been upgraded: your flight is in business class.",
        "Which class am I flying?",
    ),
    (
        "My gym class is spin on Mondays.",
        "Your Monday class was replaced by a pilates session.",
        "What is my Monday gym class?",
    ),
    (
        "The interview is with the hiring manager.",
        "The recruiter says your interview is now with the head of engineering.",
        "Who is my interview with?",
    ),
    (
        "My parcel is arriving on Friday.",
        "The courier says your parcel will arrive on Monday.",
        "When will my parcel arrive?",
    ),
    (
        "My meeting with Karen is at noon.",
        "Karen moved your meeting to 4 pm.",
        "When am I meeting Karen?",
    ),
    (
        "I'm assigned to the billing project.",
        "Your manager has assigned you to the search project.",
        "Which project am I on?",
    ),
    (
        "My electricity tariff is the fixed one.",
        "Your energy supplier moved you to the variable tariff.",
        "Which electricity tariff do I have?",
    ),
    (
        "My passport renewal is at the Durham office.",
        "Your passport appointment is now at the Liverpool office.",
        "Where is my passport appointment?",
    ),
    (
        "My car rental in Crete is a Fiat 500.",
        "The rental company gave you a Peugeot 208 instead.",
        "What rental car do I have in Crete?",
    ),
    (
        "The quarterly report is due on the 5th.",
        "Finance moved the quarterly report due date to the 10th.",
        "When is the quarterly report due?",
    ),
    (
        "My plumber is coming in the morning.",
        "The plumber rescheduled for the afternoon.",
        "When is the plumber coming?",
    ),
    (
        "My seat at the theatre is in the stalls.",
        "The theatre moved you to the dress circle.",
        "Where is my theatre seat?",
    ),
    (
        "My loan repayment is 250 a month.",
        "After refinancing, your repayment is 210 a month.",
        "How much is my loan repayment?",
    ),
]

# the update shares its session with facts about neighbouring subjects
# (old, new, distractor in the old session, distractor in the new session, question)
DISTRACTOR = [
    (
        "My car is a Honda Jazz.",
        "My car is a Mazda 3.",
        "My brother's car is a Honda Civic.",
        "My wife's car is a Volvo XC40.",
        "What car do I drive?",
    ),
    (
        "I live in Glasgow.",
        "I live in Edinburgh.",
        "My parents live in Aberdeen.",
        "My sister lives in Dundee.",
        "Which city do I live in?",
    ),
    (
        "My manager is Olu.",
        "My manager is Grace.",
        "My mentor is Fergus.",
        "My skip-level manager is Hannah.",
        "Who is my manager?",
    ),
    (
        "My favourite film is Alien.",
        "My favourite film is Arrival.",
        "My husband's favourite film is Jaws.",
        "My son's favourite film is Up.",
        "What's my favourite film?",
    ),
    (
        "I'm allergic to cats.",
        "I'm allergic to dust mites.",
        "My son is allergic to peanuts.",
        "My wife is allergic to pollen.",
        "What am I allergic to?",
    ),
    (
        "My phone number ends in 4471.",
        "My phone number ends in 9033.",
        "My office line ends in 1200.",
        "My wife's number ends in 5582.",
        "What does my phone number end in?",
    ),
    (
        "I work at Siemens.",
        "I work at Arup.",
        "My brother works at Siemens too.",
        "My friend Raj works at Atkins.",
        "Where am I employed?",
    ),
    (
        "My birthday dinner is at Nando's.",
        "My birthday dinner is at Dishoom.",
        "Mum's birthday dinner is at Pizza Express.",
        "Dad's birthday dinner is at Wagamama.",
        "Where is my birthday dinner?",
    ),
    (
        "My laptop is a Dell XPS.",
        "My laptop is a Lenovo Yoga.",
        "My work desktop is an HP tower.",
        "My daughter's laptop is a Chromebook.",
        "Which laptop do I have?",
    ),
    (
        "I'm training for a half marathon.",
        "I'm training for a triathlon.",
        "My partner is training for a 10k.",
        "My colleague is training for an ultramarathon.",
        "What am I training for?",
    ),
    (
        "My bike is a road bike.",
        "My bike is a gravel bike.",
        "My son's bike is a BMX.",
        "My partner's bike is an e-bike.",
        "What kind of bike do I ride?",
    ),
    (
        "My favourite colour is green.",
        "My favourite colour is orange.",
        "The living room is painted grey.",
        "My daughter's favourite colour is purple.",
        "Which colour do I like best?",
    ),
    (
        "My GP is Dr. Fraser.",
        "My GP is Dr. Mensah.",
        "My son's paediatrician is Dr. Kaur.",
        "My therapist is Dr. Levin.",
        "Who is my GP?",
    ),
    (
        "My main client is Unilever.",
        "My main client is Diageo.",
        "My colleague's main client is Unilever.",
        "Our smallest client is a bakery.",
        "Who is my main client?",
    ),
    (
        "I'm learning the guitar.",
        "I'm learning the saxophone.",
        "My daughter is learning the piano.",
        "My son is learning the trumpet.",
        "Which instrument am I learning?",
    ),
    (
        "My lunch break is at 12.",
        "My lunch break is at 1:30.",
        "The canteen closes at 2.",
        "My team's standup is at 11.",
        "When is my lunch break?",
    ),
    (
        "My pension is with Aegon.",
        "My pension is with Vanguard.",
        "My ISA is with Hargreaves Lansdown.",
        "My wife's pension is with Nest.",
        "Who holds my pension?",
    ),
    (
        "My hometown football team is Leeds.",
        "I support Newcastle.",
        "My dad supports Leeds.",
        "My son supports Chelsea.",
        "Which team do I support?",
    ),
    (
        "My work pronouns badge says he/him.",
        "My work pronouns badge says they/them.",
        "My manager's badge says she/her.",
        "My colleague's badge says he/him.",
        "What does my pronouns badge say?",
    ),
    (
        "My go-to takeaway is Chinese.",
        "My go-to takeaway is Lebanese.",
        "My flatmate's go-to takeaway is pizza.",
        "My parents' go-to takeaway is fish and chips.",
        "What takeaway do I usually order?",
    ),
    (
        "My hobby is woodworking.",
        "My hobby is bouldering.",
        "My wife's hobby is knitting.",
        "My dad's hobby is fishing.",
        "What is my hobby?",
    ),
    (
        "I'm in the marketing department.",
        "I'm in the product department.",
        "My friend is in the sales department.",
        "The new hire is in the marketing department.",
        "Which department am I in?",
    ),
    (
        "My emergency contact is my mum.",
        "My emergency contact is my partner.",
        "My son's emergency contact is the school nurse.",
        "My mum's emergency contact is my aunt.",
        "Who is my emergency contact?",
    ),
    (
        "My skincare routine uses CeraVe.",
        "My skincare routine uses La Roche-Posay.",
        "My sister uses CeraVe too.",
        "My partner uses Nivea.",
        "What brand is my skincare?",
    ),
    (
        "My star sign app says I'm a Leo, I don't believe it.",
        "I'm actually a Virgo, my birth certificate was wrong.",
        "My brother is a Leo.",
        "My partner is a Pisces.",
        "What is my star sign?",
    ),
]

# the question shares no content word with either statement
NOWORD = [
    ("I live in Lisbon.", "I moved to Copenhagen.", "Which city is home for me?"),
    (
        "I drive a Volkswagen Golf.",
        "I bought a Tesla Model Y.",
        "What vehicle is parked outside my house?",
    ),
    ("I work as a nurse.", "I retrained and I'm an electrician.", "What's my profession?"),
    ("My husband is Daniel.", "I married Robert.", "Who's my spouse?"),
    (
        "I eat porridge for breakfast.",
        "I have eggs on toast in the morning.",
        "What's my first meal of the day?",
    ),
    ("I listen to jazz.", "I mostly listen to techno.", "What music am I into?"),
    ("My dog is a labrador.", "We got a dachshund.", "What breed is our pet?"),
    (
        "I speak French at home.",
        "We speak Polish at home.",
        "Which tongue is used in our household?",
    ),
    (
        "I holiday in Cornwall every summer.",
        "We spend summers in Crete.",
        "Where do we go on vacation?",
    ),
    ("I'm studying law.", "I'm studying medicine.", "What's my degree subject?"),
    (
        "I watch the news on BBC.",
        "I get my news from The Guardian app.",
        "Where do I follow current affairs?",
    ),
    ("I cycle to the office.", "I walk to the office.", "How do I get to my workplace?"),
    (
        "I sleep with two pillows.",
        "I sleep with one pillow.",
        "How many cushions do I use at night?",
    ),
    (
        "My favourite sport to watch is rugby.",
        "My favourite sport to watch is snooker.",
        "Which game do I enjoy seeing on TV?",
    ),
    ("I'm a Catholic.", "I'm an atheist.", "What are my religious beliefs?"),
    ("I vote Labour.", "I vote Green.", "Which party gets my support at elections?"),
    (
        "I meditate with Headspace.",
        "I meditate with Calm.",
        "Which mindfulness app is on my phone?",
    ),
    ("My flat has gas heating.", "My flat has a heat pump.", "How is my home warmed?"),
    (
        "I wear glasses.",
        "I had laser eye surgery and don't need glasses.",
        "Do I need anything to see properly?",
    ),
    ("I bake sourdough on weekends.", "I brew beer on weekends.", "What's my Saturday project?"),
    (
        "My son is a goalkeeper.",
        "My son plays as a striker.",
        "What position does my boy have on the pitch?",
    ),
    ("I'm a night owl.", "I'm an early bird.", "Am I more alert late or early?"),
    (
        "My pet rabbit is called Clover.",
        "My pet tortoise is called Sheldon.",
        "What animal lives with me?",
    ),
    ("I use Spotify.", "I use Apple Music.", "Where do I stream songs?"),
    (
        "I rent my flat.",
        "I own my flat now, I bought it in spring.",
        "Am I a tenant or a homeowner?",
    ),
]

# the subject is named differently in the old and the new statement
PARAPHRASE = [
    (
        "My car is a Nissan Leaf.",
        "These days I get around in a Hyundai Ioniq.",
        "What car do I have?",
    ),
    ("My job is teaching English.", "I earn my living as a translator.", "What do I do for work?"),
    ("My home is in Bath.", "I've settled in Exeter.", "Where is my home?"),
    ("My mobile is a Samsung Galaxy.", "I carry a Google Pixel around.", "What mobile do I have?"),
    (
        "My go-to drink at the pub is cider.",
        "At the pub I always order a stout.",
        "What do I drink at the pub?",
    ),
    ("My weekly yoga class is on Monday.", "I do yoga every Friday.", "When is my yoga class?"),
    ("My employer is Boots.", "I'm on the payroll at Sainsbury's.", "Who is my employer?"),
    ("My partner is called Mia.", "I'm dating Noah.", "Who is my partner?"),
    ("My daily commute is by tram.", "I get to work on an e-scooter.", "How do I commute?"),
    (
        "My savings account pays 3 percent.",
        "The interest on my savings is 4.5 percent.",
        "What rate does my savings account pay?",
    ),
    (
        "My evening routine ends with reading.",
        "Before bed I do a crossword.",
        "How do I end my evening?",
    ),
    (
        "My writing tool is Microsoft Word.",
        "I draft everything in Google Docs.",
        "Which writing tool do I use?",
    ),
    (
        "My favourite author is Ishiguro.",
        "The writer I admire most is Le Guin.",
        "Who is my favourite author?",
    ),
    (
        "My preferred airline is British Airways.",
        "I always fly with KLM.",
        "Which airline do I prefer?",
    ),
    ("My main form of exercise is swimming.", "I keep fit by rowing.", "What is my main exercise?"),
    (
        "My workplace is in Canary Wharf.",
        "I report to an office in Shoreditch.",
        "Where is my workplace?",
    ),
    (
        "My lunch is usually a sandwich.",
        "At midday I tend to eat a salad.",
        "What do I usually have for lunch?",
    ),
    (
        "My streaming service is Disney Plus.",
        "We watch everything on Amazon Prime.",
        "Which streaming service do we use?",
    ),
    ("My therapist is Helen.", "I see a counsellor named Marcus.", "Who is my therapist?"),
    (
        "My preferred pizza topping is pepperoni.",
        "On pizza I always go for mushrooms.",
        "What pizza topping do I like?",
    ),
    ("My nickname at work is Doc.", "Colleagues call me Skipper.", "What is my nickname at work?"),
    (
        "My garden has roses.",
        "I grow tomatoes and courgettes in my garden beds.",
        "What is in my garden?",
    ),
    (
        "My ringtone is the default marimba.",
        "My phone rings with a Beatles song.",
        "What is my ringtone?",
    ),
    (
        "My weekend job is at a bakery.",
        "On Saturdays I wait tables at a bistro.",
        "What is my weekend job?",
    ),
    (
        "My kids' school run is by car.",
        "I take the children to school on foot.",
        "How do the kids get to school?",
    ),
]

# the guard set (session 14, helper H1): NOT updates. Two facts about two different subjects,
# the second said right after the first, and a question about the first: the second must not
# take over the first's rank. Written in one sitting before any rule was measured on them,
# most in the same sentence frame as each other (the hard kind: "My sister lives in Leeds." /
# "My brother lives in Glasgow."), the rest about a nearby subject; split like the cases above
NEIGHBOURS = [
    ("My sister lives in Leeds.", "My brother lives in Glasgow.", "Where does my sister live?"),
    (
        "The billing API runs on Postgres.",
        "The analytics pipeline runs on ClickHouse.",
        "Which database does the billing API run on?",
    ),
    (
        "My daughter's teacher is Mrs Patel.",
        "My son's teacher is Mr Hughes.",
        "Who is my daughter's teacher?",
    ),
    (
        "My wife's birthday is on June 12.",
        "My mother's birthday is on October 3.",
        "When is my wife's birthday?",
    ),
    (
        "Our office in Berlin opens at 8am.",
        "Our office in Madrid opens at 9:30am.",
        "When does the Berlin office open?",
    ),
    (
        "The staging server is called orion.",
        "The production server is called vega.",
        "What is the staging server called?",
    ),
    (
        "My car insurance is with Aviva.",
        "My home insurance is with Direct Line.",
        "Who is my car insurance with?",
    ),
    (
        "My running shoes are Asics.",
        "My hiking boots are Merrell.",
        "What brand are my running shoes?",
    ),
    ("Tom is allergic to peanuts.", "Anna is allergic to shellfish.", "What is Tom allergic to?"),
    (
        "The kitchen walls are painted sage green.",
        "The bedroom walls are painted dusty pink.",
        "What colour are the kitchen walls?",
    ),
    (
        "My laptop runs Ubuntu.",
        "My desktop runs Windows 11.",
        "Which operating system does my laptop run?",
    ),
    (
        "The frontend team uses React.",
        "The mobile team uses Flutter.",
        "Which framework does the frontend team use?",
    ),
    (
        "My brother-in-law works as an electrician.",
        "My cousin works as a pharmacist.",
        "What does my brother-in-law do for work?",
    ),
    ("The cat eats salmon kibble.", "The dog eats a lamb and rice mix.", "What does the cat eat?"),
    (
        "My Monday class is pottery.",
        "My Wednesday class is salsa dancing.",
        "What is my Monday class?",
    ),
    (
        "My mortgage rate is 4.1 percent.",
        "My savings account pays 3.2 percent.",
        "What is my mortgage rate?",
    ),
    (
        "The London team's standup is at 9:15.",
        "The New York team's standup is at 10:00.",
        "When is the London team's standup?",
    ),
    (
        "My father supports Arsenal.",
        "My uncle supports Everton.",
        "Which team does my father support?",
    ),
    (
        "My passport number ends in 4471.",
        "My driving licence number ends in 9082.",
        "What does my passport number end in?",
    ),
    (
        "The guest room has a double bed.",
        "The study has a sofa bed.",
        "What kind of bed is in the guest room?",
    ),
    (
        "Project Falcon is led by Irina.",
        "Project Heron is led by Marcus.",
        "Who leads Project Falcon?",
    ),
    (
        "My best friend Sam lives in Dublin.",
        "My old flatmate Chris lives in Bristol.",
        "Where does Sam live?",
    ),
    (
        "The orders table is partitioned by month.",
        "The events table is partitioned by day.",
        "How is the orders table partitioned?",
    ),
    (
        "My morning medication is levothyroxine.",
        "My evening medication is atorvastatin.",
        "Which medication do I take in the morning?",
    ),
    (
        "My niece is studying medicine.",
        "My nephew is studying architecture.",
        "What is my niece studying?",
    ),
    (
        "The back garden faces south.",
        "The front garden faces north.",
        "Which way does the back garden face?",
    ),
    ("My work phone is a Pixel 8.", "My personal phone is an iPhone 13.", "What is my work phone?"),
    (
        "The recruitment budget is 40,000 pounds.",
        "The training budget is 15,000 pounds.",
        "What is the recruitment budget?",
    ),
    (
        "Our cleaner comes on Thursdays.",
        "Our gardener comes on Mondays.",
        "When does our cleaner come?",
    ),
    (
        "My grandmother's house is in Cornwall.",
        "My aunt's flat is in Edinburgh.",
        "Where is my grandmother's house?",
    ),
    (
        "I'm allergic to penicillin.",
        "My doctor prescribed me antihistamines for hay fever.",
        "Which drug am I allergic to?",
    ),
    ("My bike is a Brompton.", "My partner rides a Specialized road bike.", "What bike do I have?"),
    (
        "I speak Portuguese fluently.",
        "My husband is learning Italian.",
        "Which language do I speak fluently?",
    ),
    (
        "Our wifi password is on the fridge.",
        "The router is in the hallway cupboard.",
        "Where is the wifi password?",
    ),
    (
        "My favourite restaurant is Dishoom.",
        "My sister's favourite restaurant is Nando's.",
        "What is my favourite restaurant?",
    ),
    (
        "I park in bay 14 at work.",
        "Visitors park in the lot behind the gym.",
        "Where do I park at work?",
    ),
    (
        "The quarterly report is due on the 5th.",
        "The board meeting is on the 12th.",
        "When is the quarterly report due?",
    ),
    (
        "My yoga teacher is called Leila.",
        "My piano teacher is called Bruno.",
        "What is my yoga teacher called?",
    ),
    (
        "The spare key is under the blue flowerpot.",
        "The garage remote is in the kitchen drawer.",
        "Where is the spare key?",
    ),
    (
        "I take my coffee with oat milk.",
        "My colleague Dan drinks his tea with honey.",
        "How do I take my coffee?",
    ),
    ("My accountant is Fiona Reid.", "My solicitor is Gareth Owen.", "Who is my accountant?"),
    (
        "My flight to Lisbon leaves at 7:40.",
        "My train to Manchester leaves at 16:05.",
        "When does my flight to Lisbon leave?",
    ),
    (
        "The cache layer uses Redis.",
        "The message queue uses RabbitMQ.",
        "What does the cache layer use?",
    ),
    (
        "My son plays the trumpet.",
        "My daughter plays the flute.",
        "What instrument does my son play?",
    ),
    (
        "The printer on floor two is an HP LaserJet.",
        "The scanner on floor three is a Canon.",
        "Which printer is on floor two?",
    ),
    (
        "My gym membership costs 35 pounds a month.",
        "My phone contract costs 22 pounds a month.",
        "How much does my gym membership cost?",
    ),
    ("Our landlord is Mr Adeyemi.", "Our letting agent is Foxtons.", "Who is our landlord?"),
    (
        "My blood type is O negative.",
        "My husband's blood type is A positive.",
        "What is my blood type?",
    ),
    (
        "The team offsite is in Lisbon.",
        "The company conference is in Amsterdam.",
        "Where is the team offsite?",
    ),
    (
        "The API rate limit is 100 requests per minute.",
        "The upload size limit is 25 megabytes.",
        "What is the API rate limit?",
    ),
]

# unrelated facts the runner spreads over the sessions (three per session)
FILLER = [
    "I grew up on a farm in Norfolk.",
    "My grandmother taught me to knit.",
    "I'm scared of heights.",
    "I once met the Prime Minister at a train station.",
    "I have a tattoo of a compass on my arm.",
    "My first concert was Oasis in 1996.",
    "I broke my wrist skiing when I was twelve.",
    "I collect vintage postcards.",
    "I can't stand the taste of coriander.",
    "My middle name is Elizabeth.",
    "I was born in a snowstorm.",
    "I keep a journal every night.",
    "My favourite museum is the V&A.",
    "I learned to drive at seventeen.",
    "I have a twin cousin in Canada.",
    "I was a lifeguard as a teenager.",
    "My neighbour has three parrots.",
    "I ran the London Marathon in 2015.",
    "I don't like horror films.",
    "My grandfather was a sailor.",
    "I'm left-handed.",
    "I keep bees on my allotment.",
    "I did a ceramics course last winter.",
    "My first pet was a goldfish called Bubbles.",
]

KINDS: dict[str, list[tuple[str, ...]]] = {
    "cue": CUE,
    "nocue": NOCUE,
    "numeric": NUMERIC,
    "reversal": REVERSAL,
    "chain": CHAIN,
    "assistant": ASSISTANT,
    "distractor": DISTRACTOR,
    "noword": NOWORD,
    "paraphrase": PARAPHRASE,
}


def split(case_id: str) -> str:
    """dev or test, fixed by the id's hash (about half each); chosen once, never edited."""
    return "dev" if hashlib.sha256(case_id.encode()).digest()[0] % 2 == 0 else "test"


def build_cases() -> list[dict[str, Any]]:
    """Every case as sessions of (speaker, text, is_case) plus its question."""
    out: list[dict[str, Any]] = []
    for kind, rows in KINDS.items():
        for n, row in enumerate(rows, 1):
            sessions: list[list[tuple[str, str, bool]]]
            if kind == "distractor":
                old, new, d_old, d_new, question = row
                sessions = [
                    [("user", old, True), ("user", d_old, False)],
                    [("user", d_new, False), ("user", new, True)],
                ]
            elif kind == "assistant":
                old, new, question = row
                sessions = [[("user", old, True)], [("assistant", new, True)]]
            else:
                *steps, question = row
                sessions = [[("user", s, True)] for s in steps]
            case_id = f"{kind}-{n}"
            out.append(
                {
                    "id": case_id,
                    "category": kind,
                    "split": split(case_id),
                    "sessions": sessions,
                    "question": question,
                    "answer": len(sessions) - 1,
                }
            )
    return out


def build_neighbours() -> list[dict[str, Any]]:
    """The guard set as cases of two sessions, the asked-about fact first (``answer`` 0)."""
    out: list[dict[str, Any]] = []
    for n, (asked, neighbour, question) in enumerate(NEIGHBOURS, 1):
        case_id = f"neighbour-{n}"
        out.append(
            {
                "id": case_id,
                "category": "neighbour",
                "split": split(case_id),
                "sessions": [[("user", asked, True)], [("user", neighbour, True)]],
                "question": question,
                "answer": 0,
            }
        )
    return out
