"""Minimal-pair sets in the published benchmarks' own styles, of any size, for benchmarks.

Pairs are made from templates and word lists written for the project, paradigm by paradigm,
as BLiMP, CLiMP and the GEC recipe's learner pairs are: real-looking sentences whose two
versions differ in one word, at the start, in the middle or at the end of the sentence.

- `write_blimp_style`: BLiMP JSONL (`sentence_good`, `sentence_bad`, `field`,
  `linguistics_term`, `UID`, `pairID`), eight English paradigms;
- `write_climp_style`: a folder of CLiMP CSV files as released (the `,0,1,2,3` pandas
  layout; `ba_construction` as bare sentences), six Chinese paradigms, no final punctuation;
- `write_gec_pairs`: a gramagents dataset of `GEC-PAIR` items (a learner's sentence against
  its correction), eight CEFR grammar items.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

Pair = tuple[str, str]
Maker = Callable[[random.Random], Pair]

_FEMALE = ["Tina", "Margaret", "Rebecca", "Sandra", "Kristen", "Julia", "Amanda", "Helen"]
_MALE = ["Raymond", "Carlos", "Bill", "Gregory", "Dennis", "Jeffrey", "Martin", "Aaron"]
_NOUNS = [  # singular, plural
    ("sketch", "sketches"),
    ("painting", "paintings"),
    ("report", "reports"),
    ("screen", "screens"),
    ("book", "books"),
    ("glove", "gloves"),
    ("photograph", "photographs"),
    ("essay", "essays"),
    ("lamp", "lamps"),
    ("carriage", "carriages"),
]
_GROUPS = ["waitresses", "customers", "students", "senators", "dancers", "patients", "guests"]
_GROUP_VERBS = [  # plural present, singular present
    ("admire", "admires"),
    ("discuss", "discusses"),
    ("criticize", "criticizes"),
    ("remember", "remembers"),
    ("describe", "describes"),
]
_PLACES = ["the museum", "the library", "the hospital", "the school", "the river", "the bank"]
_SELF_VERBS = [
    "hurt",
    "praised",
    "described",
    "blamed",
    "questioned",
    "concealed",
    "fired",
    "embarrassed",
    "helped",
    "trusted",
]
_AUXES = ["", "has ", "had ", "might have ", "should have ", "can't have "]
_PARTICIPLES = [  # participle, past tense (the wrong form after "had")
    ("broken", "broke"),
    ("taken", "took"),
    ("written", "wrote"),
    ("hidden", "hid"),
    ("forgotten", "forgot"),
    ("eaten", "ate"),
]
_DONE = [  # past participles of what a group may have done
    "complained about the food",
    "left before noon",
    "noticed the mistake",
    "visited the museum",
    "forgotten the password",
    "lied to the manager",
    "argued with the driver",
    "seen the report",
    "paid for the tickets",
    "worked on a Sunday",
    "cried in public",
    "praised the teacher",
]


def _group(rng: random.Random) -> str:
    group = rng.choice(_GROUPS)
    return rng.choice([group, f"{group} from {rng.choice(_PLACES)}"])


def _only_npi(rng: random.Random) -> Pair:  # the first word
    subject = rng.choice([f"the {_group(rng)}", rng.choice(_FEMALE + _MALE)])
    tail = f"{subject} had ever {rng.choice(_DONE)}."
    return f"Only {tail}", f"Even {tail}"


def _this_these(rng: random.Random) -> Pair:  # the first word
    noun = rng.choice(_NOUNS)[0]
    rest = f"{noun} {rng.choice(['impressed', 'confused', 'worried', 'bored'])} "
    rest += f"{rng.choice(_FEMALE + _MALE)}."
    return f"This {rest}", f"These {rest}"


def _subject_verb(rng: random.Random) -> Pair:  # the middle
    group, (plural, singular) = rng.choice(_GROUPS), rng.choice(_GROUP_VERBS)
    place, noun = rng.choice(_PLACES), rng.choice(_NOUNS)[1]
    start, end = f"The {group} near {place}", f"these {noun}."
    return f"{start} {plural} {end}", f"{start} {singular} {end}"


def _participle(rng: random.Random) -> Pair:  # the middle
    name, (right, wrong) = rng.choice(_FEMALE + _MALE), rng.choice(_PARTICIPLES)
    noun = rng.choice(_NOUNS)[0]
    return f"{name} had {right} the {noun}.", f"{name} had {wrong} the {noun}."


def _negation_npi(rng: random.Random) -> Pair:  # the middle
    start, end = f"Those {_group(rng)} had", f"ever {rng.choice(_DONE)}."
    return f"{start} not {end}", f"{start} really {end}"


def _anaphor_gender(rng: random.Random) -> Pair:  # the last word
    start = f"{rng.choice(_FEMALE)} {rng.choice(_AUXES)}{rng.choice(_SELF_VERBS)}"
    return f"{start} herself.", f"{start} himself."


def _anaphor_number(rng: random.Random) -> Pair:  # the last word
    start = f"The {rng.choice(_GROUPS)} {rng.choice(_AUXES)}{rng.choice(_SELF_VERBS)}"
    return f"{start} themselves.", f"{start} itself."


def _det_noun(rng: random.Random) -> Pair:  # the last word
    name, (singular, plural) = rng.choice(_FEMALE + _MALE), rng.choice(_NOUNS)
    verb = rng.choice(["is selling", "was fixing", "will clean", "has bought", "likes"])
    return f"{name} {verb} those {plural}.", f"{name} {verb} those {singular}."


BLIMP_PARADIGMS: dict[str, tuple[str, str, Maker]] = {
    # UID: (field, linguistics_term, maker)
    "only_npi_licensor_present": ("semantics", "npi_licensing", _only_npi),
    "determiner_noun_agreement_start": ("morphology", "determiner_noun_agreement", _this_these),
    "regular_plural_subject_verb_agreement": (
        "morphology",
        "subject_verb_agreement",
        _subject_verb,
    ),
    "irregular_past_participle_verbs": ("morphology", "irregular_forms", _participle),
    "sentential_negation_npi_licensor_present": ("semantics", "npi_licensing", _negation_npi),
    "anaphor_gender_agreement": ("morphology", "anaphor_agreement", _anaphor_gender),
    "anaphor_number_agreement": ("morphology", "anaphor_agreement", _anaphor_number),
    "determiner_noun_agreement_1": ("morphology", "determiner_noun_agreement", _det_noun),
}


def _unique(makers: list[Maker], pairs: int, seed: int) -> list[tuple[int, Pair]]:
    """`pairs` distinct pairs, made by each maker in turn: (maker index, pair)."""
    rng = random.Random(seed)
    made: list[tuple[int, Pair]] = []
    seen: set[Pair] = set()
    tries = 0
    while len(made) < pairs:
        index = len(made) % len(makers)
        pair = makers[index](rng)
        tries += 1
        if tries > 100 * pairs + 1000:
            raise ValueError(f"the word lists give fewer than {pairs} distinct pairs")
        if pair not in seen:
            seen.add(pair)
            made.append((index, pair))
    return made


def write_blimp_style(path: Path, pairs: int = 2000, seed: int = 7) -> Path:
    """BLiMP JSONL of `pairs` pairs spread over `BLIMP_PARADIGMS`."""
    uids = list(BLIMP_PARADIGMS)
    made = _unique([BLIMP_PARADIGMS[u][2] for u in uids], pairs, seed)
    lines = []
    for number, (index, (good, bad)) in enumerate(made):
        field, term, _ = BLIMP_PARADIGMS[uids[index]]
        row = {
            "sentence_good": good,
            "sentence_bad": bad,
            "field": field,
            "linguistics_term": term,
            "UID": uids[index],
            "pairID": str(number),
        }
        lines.append(json.dumps(row))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


_NAMES_ZH = ["王丽娜", "陈建国", "周晓梅", "刘洋", "赵强", "孙莹", "李春生", "黄敏", "张伟", "吴芳"]
_WOMEN_ZH = [
    "王丽娜",
    "周晓梅",
    "孙莹",
    "黄敏",
    "吴芳",
    "那个女演员",
    "我的姐姐",
    "他的妈妈",
    "那位女医生",
    "李老师的女儿",
    "新来的女同学",
    "刘奶奶",
]
_CLASSIFIED = [  # classifier, noun, a wrong classifier
    ("本", "杂志", "匹"),
    ("辆", "自行车", "张"),
    ("支", "铅笔", "头"),
    ("把", "椅子", "条"),
    ("件", "衬衫", "只"),
    ("台", "电脑", "根"),
    ("座", "桥", "封"),
    ("杯", "咖啡", "辆"),
]
_HUMANS = [
    ("位", "老师"),
    ("个", "学生"),
    ("名", "医生"),
    ("个", "邻居"),
    ("位", "客人"),
    ("名", "司机"),
]
_DOINGS = [
    "昨天来过这里",
    "正在看书",
    "已经回家了",
    "很喜欢唱歌",
    "刚才打电话了",
    "每天都跑步",
    "住在我家对面",
    "不认识我",
    "忘了带钥匙",
    "会说三种语言",
]
_DONE_ZH = [
    "作业写完了",
    "衣服洗干净了",
    "窗户打开了",
    "房间打扫好了",
    "门关上了",
    "信寄出去了",
    "蛋糕吃完了",
    "自行车修好了",
    "花浇完了",
    "书放回去了",
    "灯关掉了",
    "行李收拾好了",
]


def _zh_anaphor(rng: random.Random) -> Pair:  # the end
    verb = rng.choice(["批评了", "照顾过", "夸奖了", "原谅了", "保护过", "怀疑过", "说服了"])
    start = f"{rng.choice(_WOMEN_ZH)}{rng.choice(['', '昨天', '又', '曾经', '终于'])}{verb}"
    return f"{start}她自己", f"{start}它自己"


def _zh_classifier(rng: random.Random) -> Pair:  # the middle
    cl, noun, wrong = rng.choice(_CLASSIFIED)
    start = f"{rng.choice(_NAMES_ZH)}{rng.choice(['买了', '正在修', '借给我', '看见了'])}一"
    return f"{start}{cl}{noun}", f"{start}{wrong}{noun}"


def _zh_subject_classifier(rng: random.Random) -> Pair:  # the start
    cl, noun = rng.choice(_HUMANS)
    wrong = rng.choice(["张", "条", "匹", "本"])
    this, rest = rng.choice(["那", "这"]), f"{noun}{rng.choice(_DOINGS)}"
    return f"{this}{cl}{rest}", f"{this}{wrong}{rest}"


def _zh_ba(rng: random.Random) -> Pair:  # the middle
    start = f"{rng.choice(_NAMES_ZH)}{rng.choice(['', '已经', '终于', '刚刚'])}"
    thing = rng.choice(_DONE_ZH)
    return f"{start}把{thing}", f"{start}被{thing}"


def _zh_coverb(rng: random.Random) -> Pair:  # the middle
    first, second = rng.sample(_NAMES_ZH, 2)
    rest = f"{second}{rng.choice(['讨论了问题', '打了篮球', '吃了午饭', '去了公园'])}"
    return f"{first}跟{rest}", f"{first}于{rest}"


def _zh_duration(rng: random.Random) -> Pair:  # the end
    verb = rng.choice(["学习了", "休息了", "旅行了", "工作了", "等了", "住了", "练习了", "睡了"])
    right, wrong = rng.choice(
        [
            ("一天", "每天"),
            ("三年", "每年"),
            ("两周", "每周"),
            ("一个月", "每月"),
            ("两个小时", "每小时"),
            ("一晚", "每晚"),
        ]
    )
    start = f"{rng.choice(_NAMES_ZH)}{verb}"
    return f"{start}{right}", f"{start}{wrong}"


CLIMP_PARADIGMS: dict[str, tuple[str, Maker]] = {
    # file stem: (phenomenon, maker)
    "anaphor_agreement_gender": ("anaphor_agreement", _zh_anaphor),
    "classifier": ("classifier", _zh_classifier),
    "classifier_subject": ("classifier", _zh_subject_classifier),
    "ba_construction": ("ba_construction", _zh_ba),
    "coverb_with": ("coverb", _zh_coverb),
    "verb_complement_duration": ("verb_complement", _zh_duration),
}


def write_climp_style(folder: Path, pairs: int = 1000, seed: int = 7) -> Path:
    """CLiMP files as released: one per paradigm, `ba_construction` as bare sentences."""
    folder.mkdir(parents=True, exist_ok=True)
    stems = list(CLIMP_PARADIGMS)
    made = _unique([CLIMP_PARADIGMS[s][1] for s in stems], pairs, seed)
    for index, stem in enumerate(stems):
        phenomenon = CLIMP_PARADIGMS[stem][0]
        own = [pair for i, pair in made if i == index]
        path = folder / f"{stem}_{len(own)}.csv"
        if stem == "ba_construction":  # as released: CRLF, no newline at the end
            path.write_bytes("\r\n".join(s for pair in own for s in pair).encode("utf-8"))
            continue
        rows = [",0,1,2,3"]
        for good, bad in own:
            for sentence, label in ((good, 1), (bad, 0)):
                rows.append(f"{len(rows) - 1},{phenomenon},{stem},{sentence},{label}")
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


_PEOPLE = ["She", "My brother", "Our teacher", "Tom", "Mary", "He", "My friend", "The doctor"]
_PLACES_EN = ["school", "work", "the park", "the gym", "church", "the market"]
_SUBJECTS_PL = ["I", "We", "They", "You", "My parents", "The children"]


def _these(rng: random.Random) -> Pair:  # the start
    noun = f"{rng.choice(['', 'old ', 'new ', 'red ', 'small '])}{rng.choice(_NOUNS)[1]}"
    end = rng.choice(["on the table", "in the box", "on the shelf", "in my bag", "by the door"])
    return f"These {noun} are {end}.", f"This {noun} are {end}."


def _be(rng: random.Random) -> Pair:  # the middle
    mood = rng.choice(
        ["happy", "tired", "busy", "hungry", "late", "ready", "sick", "free", "cold", "sad", "calm"]
    )
    degree = rng.choice(["", "very ", "really "])
    when = rng.choice(["today", "now", "this morning", "tonight", "again"])
    end = f"{degree}{mood} {when}."
    return f"I am {end}", f"I is {end}"


def _article(rng: random.Random) -> Pair:  # the middle
    food = rng.choice(["apple", "orange", "egg", "onion", "avocado"])
    when = rng.choice(["for lunch", "for breakfast", "after school", "in the kitchen", "at noon"])
    start = f"{rng.choice(_PEOPLE)} ate"
    return f"{start} an {food} {when}.", f"{start} a {food} {when}."


def _third_person(rng: random.Random) -> Pair:  # the middle
    person = rng.choice(_PEOPLE)
    verb, base = rng.choice([("goes", "go"), ("walks", "walk"), ("drives", "drive")])
    end = f"to {rng.choice(_PLACES_EN)} every {rng.choice(['day', 'morning', 'Monday'])}."
    return f"{person} {verb} {end}", f"{person} {base} {end}"


def _plural(rng: random.Random) -> Pair:  # the end
    count = rng.choice(["two", "three", "four", "many", "five"])
    singular, plural = rng.choice(_NOUNS)
    start = f"{rng.choice(_PEOPLE)} bought {count}"
    return f"{start} {plural}.", f"{start} {singular}."


def _past(rng: random.Random) -> Pair:  # the middle
    past, base = rng.choice(
        [("visited", "visit"), ("watched", "watch"), ("cleaned", "clean"), ("painted", "paint")]
        + [("opened", "open"), ("closed", "close")]
    )
    person = rng.choice(_PEOPLE)
    thing = rng.choice(["the museum", "a film", "the kitchen", "the garden"])
    return f"Yesterday {person} {past} {thing}.", f"Yesterday {person} {base} {thing}."


def _perfect(rng: random.Random) -> Pair:  # the middle
    right, wrong = rng.choice(
        [("seen", "saw"), ("done", "did"), ("eaten", "ate"), ("written", "wrote")]
        + [("taken", "took"), ("broken", "broke")]
    )
    end = rng.choice(["it before.", "that already.", "this many times.", "it twice.", "one."])
    person = rng.choice(_SUBJECTS_PL)
    return f"{person} have {right} {end}", f"{person} have {wrong} {end}"


def _gerund(rng: random.Random) -> Pair:  # the middle
    right, wrong = rng.choice(
        [("swimming", "swim"), ("reading", "read"), ("cooking", "cook"), ("dancing", "dance")]
        + [("painting", "paint"), ("running", "run"), ("singing", "sing"), ("hiking", "hike")]
    )
    end = rng.choice(["in the summer.", "at weekends.", "with friends.", "a lot.", "at night."])
    person = rng.choice(_SUBJECTS_PL)
    return f"{person} enjoy {right} {end}", f"{person} enjoy {wrong} {end}"


GEC_ITEMS: dict[str, tuple[str, Maker]] = {
    # grammar item: (CEFR level, maker)
    "these-plural-noun": ("A1", _these),
    "i-am": ("A1", _be),
    "third-person-s": ("A1", _third_person),
    "plural-after-numbers": ("A1", _plural),
    "past-simple-regular": ("A2", _past),
    "article-an": ("A2", _article),
    "present-perfect-participle": ("B1", _perfect),
    "enjoy-gerund": ("B1", _gerund),
}


def write_gec_pairs(path: Path, pairs: int = 1000, seed: int = 7) -> Path:
    """A dataset of GEC-PAIR items (correction against the learner's sentence)."""
    names = list(GEC_ITEMS)
    made = _unique([GEC_ITEMS[n][1] for n in names], pairs, seed)
    lines = []
    for number, (index, (good, bad)) in enumerate(made):
        point, level = names[index], GEC_ITEMS[names[index]][0]
        item = {
            "id": f"GEC-PAIR/{point}-{number}",
            "task": "GEC-PAIR",
            "prompt": {"template": "raw.md", "vars": {"good": good, "bad": bad}},
            "answer": "good",
            "meta": {"point": point, "level": level, "name": point},
        }
        lines.append(json.dumps(item, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
