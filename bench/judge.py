"""The rubric judge on the embedded model: one pass per prompt against a pass per field.

Judges answers to the EduEval example's question-generation, teaching-design and
text-writing items (`examples/edu/5_creativity/`) with their rubrics, as `gramagents eval`
does (the judge prompt, the judgment schema, temperature 0), on the embedded model twice in
one process: `guided_steps=cached` (the default: each prompt computed once, its KV cache kept
from field to field) and `guided_steps=batched` (every field a batched pass over the prompts
again). Prints each one's time, the tokens its answers took, and whether the two wrote the
same JSON; ends with one RESULT line. `--dtype float32` compares them without bfloat16's
rounding.

    python bench/judge.py [--dtype auto|float32] [--answers N]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from gramagents.judging.rubric import find_rubric, judge_messages, judgment_model
from gramagents.models import create_backend
from gramagents.records import ChatRequest, GenParams, Message

ROOT = Path(__file__).resolve().parent.parent
ITEMS = {
    "question-generation": "question_generation.jsonl",
    "teaching-design": "teaching_design.jsonl",
    "text-writing": "初中作文写作.jsonl",
}
ANSWER = (
    "本题围绕该知识点设计：小明去文具店买了3支钢笔，每支12元，又买了一本笔记本，共付了45元。"
    "请问笔记本多少钱？答案：45-3×12=9（元）。设计意图：结合购物情境，让学生在真实问题中运用"
    "乘法和减法，理解数量关系，培养解决实际问题的能力。"
) * 3


def requests(count: int) -> list[ChatRequest]:
    """`count` judge requests over the three rubrics, on the example's items."""
    made = []
    while len(made) < count:
        for rubric_name, file in ITEMS.items():
            rubric = find_rubric(rubric_name)
            path = ROOT / "examples" / "edu" / "5_creativity" / file
            line = path.read_text(encoding="utf-8").splitlines()[len(made) % 3]
            task_input = json.dumps(json.loads(line), ensure_ascii=False)
            messages = judge_messages(rubric, task_input, ANSWER)
            made.append(
                ChatRequest(
                    messages=[Message.model_validate(m) for m in messages],
                    params=GenParams(temperature=0.0, max_tokens=384),
                    response_schema=judgment_model(rubric).model_json_schema(),
                    structured_mode="guided",
                )
            )
    return made[:count]


def main() -> None:
    """Time both ways on the same requests; print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--answers", type=int, default=5)
    args = parser.parse_args()
    backend = create_backend(f"smollm2?dtype={args.dtype}")
    backend.lm  # noqa: B018 - load before timing
    asked = requests(args.answers)
    prompt = sum(len(backend.render(r)) for r in asked)
    texts, seconds = {}, {}
    for steps in ("cached", "batched"):
        backend.guided_steps = steps
        started = time.perf_counter()
        out = backend._generate_sync(asked)
        seconds[steps] = time.perf_counter() - started
        texts[steps] = [g.text for g in out]
        tokens = sum(g.completion_tokens or 0 for g in out)
        print(f"{steps:>8}: {seconds[steps]:.1f} s, {tokens} value tokens")
    same = sum(a == b for a, b in zip(texts["cached"], texts["batched"], strict=True))
    print(f"prompts: {len(asked)} judgments, {prompt} prompt tokens; dtype {backend.dtype}")
    for text in texts["cached"]:
        print("  ", text[:150])
    print(
        f"RESULT judge: {len(asked)} judgments on smollm2 ({backend.dtype}): one pass "
        f"{seconds['cached']:.1f} s, a pass per field {seconds['batched']:.1f} s "
        f"({seconds['batched'] / seconds['cached']:.1f}x); same JSON {same}/{len(asked)}"
    )


if __name__ == "__main__":
    main()
