"""A small CPG-EVAL release written for the tests, in the public files' layout.

Six points (sentences made up for the project), laid out as the released `question_bank/`
folder lays its 739: six bank files (`id,question`, UTF-8 with BOM, ids numbered across the
banks) and a lite file (`QuestionBank` column) holding BATCH-F and CAT-GRA and a few rows of
the other banks, one of them twice. The question texts are written here from the released
layouts (the most common one of each bank: BATCH's trailing double spaces, CON-INS-F10's
trailing spaces and extra blank line, SIM-GRA's final newline), independently of the
project's templates, so that tests can hold the templates to them byte for byte.

Like the release, two points share a label (语气助词：吧) and sit in one CAT-GRA group, one
point is a group of its own, and one is in no group and has a label without `：`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Point:
    code: str
    label: str
    group: str
    examples: tuple[str, ...]
    confusers: tuple[str, ...] = ()


POINTS = (
    Point(
        "1001",
        "能愿动词：会",
        "A",
        ("我会游泳。", "他会说法语。", "妹妹会弹钢琴。", "你会做饭吗？", "爷爷不会用电脑。"),
        (
            "我们明天开会。",
            "会议室在二楼。",
            "这次聚会很热闹。",
            "他是学生会主席。",
            "晚会八点开始。",
        ),
    ),
    Point(
        "1002",
        "能愿动词：能",
        "A",
        ("你能帮我吗？", "他能跑得很快。", "明天我能来。", "这里能停车吗？", "她能看懂中文报纸。"),
        (
            "她的能力很强。",
            "这是一个节能灯。",
            "他有很多才能。",
            "能源问题很重要。",
            "熊猫能吃竹子的传说很多。",
        ),
    ),
    Point(
        "1003",
        "语气助词：吧",
        "B",
        ("我们走吧。", "你是学生吧？", "再坐一会儿吧。", "明天再说吧。", "这件衣服不错吧？"),
        (
            "酒吧里人很多。",
            "他去网吧了。",
            "这家吧台很漂亮。",
            "吧台上放着咖啡。",
            "街角新开了一家书吧。",
        ),
    ),
    Point(
        "",
        "陈述句",
        "",
        ("今天是星期一。", "他在看书。", "天气很好。", "我喜欢喝茶。", "商店九点开门。"),
    ),
    Point(
        "2005",
        "语气助词：吧",
        "B",
        ("好吧，就这样。", "快点吧。", "你去吧。", "我们休息一下吧。", "大概有二十个人吧。"),
        (
            "吧台边坐着两个人。",
            "她在酒吧工作。",
            "网吧已经关门了。",
            "这个水吧很安静。",
            "他们在吧台点了饮料。",
        ),
    ),
    Point(
        "1006",
        "程度副词：很",
        "C",
        ("他很高。", "今天很冷。", "这本书很有意思。", "她很喜欢画画。", "饭菜很好吃。"),
    ),
)

BANK_FILES = {
    "SINGLE-T": "1-1-SINGLE-T",
    "SINGLE-F": "1-2-SINGLE-F",
    "BATCH-T": "2-1-BATCH-T",
    "BATCH-F": "2-2-BATCH-F",
    "SIM-GRA": "3-SIM-GRA",
    "CAT-GRA": "4-CAT-GRA",
    "CON-INS-F10": "5-1-CON-INS-F10",
    "CON-INS-T5F5": "5-2-CON-INS-T5F5",
}
LITE_ONLY = ("BATCH-F", "CAT-GRA")
T5F5_ORDER = "TFFTTFTFFT"
"""Where the five examples (T) and five confusing instances (F) of a T5F5 question go."""


def single(sentence: str, label: str) -> str:
    """SINGLE-T and SINGLE-F, as released."""
    return (
        f"请判断：在句子“\n\n{sentence}\n\n”中，是否包含语法点[{label}]?\n"
        "如果包含，请仅回答T\n如果不包含，请仅回答F"
    )


def _head(label: str, n: int) -> str:
    return (
        f"请对1.号到{n}.号每个句子依次进行判断：如果包含语法点[{label}]，回答T。如果不包含，回答F。"
    )


def batch(label: str, sentences: list[str]) -> str:
    """BATCH-T and BATCH-F, as released: two spaces after every sentence but the last."""
    lines = "  \n".join(f"{n}. {s}" for n, s in enumerate(sentences, start=1))
    return f"{_head(label, len(sentences))}\n{lines}\n\n请使用T或F回答，不需要解释"


def con_ins_f10(label: str, sentences: list[str]) -> str:
    """CON-INS-F10, as released: a space after every sentence, two blank lines after them."""
    lines = "".join(f"{n}. {s} \n" for n, s in enumerate(sentences, start=1))
    return f"{_head(label, len(sentences))}\n\n{lines}\n\n请使用T或F回答，不需要解释"


def con_ins_t5f5(label: str, sentences: list[str]) -> str:
    """CON-INS-T5F5, as released."""
    lines = "\n".join(f"{n}. {s}" for n, s in enumerate(sentences, start=1))
    return f"{_head(label, len(sentences))}\n\n{lines}\n\n请使用T或F回答，不需要解释"


def sim_gra(sentence: str, options: list[tuple[str, str]]) -> str:
    """SIM-GRA, as released: lettered options, the question ending in a newline."""
    lines = "".join(f"{key}. {text}\n" for key, text in options)
    return f"句子“{sentence}”最适合作为以下哪个语法点的例句？\n请只使用选项字母回答。\n{lines}"


def cat_gra(sentence: str, options: list[tuple[str, str]]) -> str:
    """CAT-GRA, as released: options by four-digit code."""
    lines = "".join(f"{key}.{text}\n" for key, text in options)
    return f"句子“{sentence}”最适合作为以下哪个语法点的例句?\n\n{lines}\n请使用四位数字编号回答"


def _group(point: Point) -> list[Point]:
    return [p for p in POINTS if point.group and p.group == point.group]


def questions() -> dict[str, list[tuple[str, str]]]:
    """Bank -> (question, gold) in released order."""
    banks: dict[str, list[tuple[str, str]]] = {bank: [] for bank in BANK_FILES}
    labels = list(dict.fromkeys(p.label for p in POINTS))
    for point in POINTS:
        for sentence in point.examples:
            banks["SINGLE-T"].append((single(sentence, point.label), "T"))
        banks["BATCH-T"].append((batch(point.label, list(point.examples)), "T" * 5))
        for other in _group(point):
            if other is not point:
                banks["SINGLE-F"].append((single(other.examples[0], point.label), "F"))
                banks["BATCH-F"].append((batch(point.label, list(other.examples)), "F" * 5))
    for point in POINTS:
        others = [label for label in labels if label != point.label]
        shown = [point.label, *others][:5]
        if point.code == "2005":  # both 吧 points offered: the release has such questions
            shown = [point.label, point.label, *others[:3]]
        for k, sentence in enumerate(point.examples):
            turned = shown[k % 5 :] + shown[: k % 5]
            options = list(zip("ABCDE", turned, strict=True))
            gold = next(key for key, text in options if text == point.label)
            banks["SIM-GRA"].append((sim_gra(f"{sentence[:-1]}呢。", options), gold))
        group = _group(point)
        for sentence in point.examples if group else ():
            options = [(p.code, p.label) for p in group]
            banks["CAT-GRA"].append((cat_gra(sentence, options), point.code))
        if point.confusers:
            banks["CON-INS-F10"].append((con_ins_f10(point.label, list(point.confusers)), "F" * 5))
            examples, confusers = iter(point.examples), iter(point.confusers)
            mixed = [next(examples if g == "T" else confusers) for g in T5F5_ORDER]
            banks["CON-INS-T5F5"].append((con_ins_t5f5(point.label, mixed), T5F5_ORDER))
    return banks


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with path.open("w", encoding="utf-8-sig", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def write_release(folder: Path) -> dict[str, str]:
    """Write the release into `folder`; returns released id -> gold answer."""
    folder.mkdir(parents=True, exist_ok=True)
    golds: dict[str, str] = {}
    numbered: dict[str, list[list[str]]] = {}
    number = 0
    for bank, rows in questions().items():
        for question, gold in rows:
            number += 1
            golds[str(number)] = gold
            numbered.setdefault(bank, []).append([str(number), question])
    for bank, rows in numbered.items():
        if bank not in LITE_ONLY:
            _write(folder / f"{BANK_FILES[bank]}.csv", ["id", "question"], rows)
    lite = [[*numbered["SINGLE-T"][0], BANK_FILES["SINGLE-T"]]]
    for bank in LITE_ONLY:
        lite += [[*row, BANK_FILES[bank]] for row in numbered[bank]]
    lite.append([*numbered["CAT-GRA"][0], BANK_FILES["CAT-GRA"]])  # a row the lite file repeats
    _write(folder / "CPG-Eval_lite.csv", ["id", "question", "QuestionBank"], lite)
    (folder / "notes.csv").write_text("note\nnot a bank file\n", encoding="utf-8")
    return golds
