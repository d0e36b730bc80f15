"""The syntactic category of an answer, by which the balanced sampling groups questions (§3.2).

The paper draws k questions per (question type, knowledge point, syntactic category of the
answer), and names categories such as "noun phrase" and "*that*-clause". A category here is
the answer's form, coarse enough that each holds many questions:

- a verb chain by its shape: the form of its first verb (past, present, modal, to-infinitive,
  ...), then what its auxiliaries make of it (perfect, progressive, passive), and whether it
  is negated or coordinated: "modal perfect", "past passive, negated", "coordinated"
  ("doesn't know" is "present, negated": `do` is no aspect);
- a phrase by its form: a noun phrase by its head (pronoun, proper noun phrase, quantity,
  ...), a clause by its complementizer or verb form (that-clause, to-infinitive clause,
  relative clause (who), ...), and its function tags that say what it does (TMP, LOC, ...)
  in alphabetical order: "prepositional phrase, LOC".

Tags that say where a phrase stands rather than what it is (SBJ, PRD, CLR, NOM, ...) are
left out: every subject carries SBJ, every subject complement PRD.
"""

from __future__ import annotations

from .trees import ADVERBIAL_TAGS, NEGATIONS, VERB_TAGS, Node, ParsedTree

MEANING_TAGS = ("ADV", "BNF", "DIR", "DTV", "EXT", "HLN", "LOC", "MNR", "PRP", "TMP", "TTL")
"""Function tags that stay in a category (the others say where a phrase stands)."""
HAVE = {"have", "has", "had", "having", "'ve"}
BE = {"be", "is", "are", "was", "were", "been", "being", "am", "'s", "'re", "'m"}
GET = {"get", "gets", "got", "gotten", "getting"}
VERB_FORMS = {
    "VBD": "past", "VBZ": "present", "VBP": "present", "MD": "modal", "TO": "to-infinitive",
    "VB": "base form", "VBG": "-ing form", "VBN": "past participle",
}  # fmt: skip
WORD_FORMS = {
    "NN": "noun", "NNS": "noun", "NNP": "proper noun", "NNPS": "proper noun", "CD": "number",
    "PRP": "pronoun", "JJ": "adjective", "JJR": "adjective", "JJS": "adjective",
    "RB": "adverb", "RBR": "adverb", "RBS": "adverb", "VB": "verb", "VBD": "verb",
    "VBZ": "verb", "VBP": "verb", "VBG": "verb", "VBN": "verb", "IN": "preposition",
    "DT": "determiner",
}  # fmt: skip
PHRASE_FORMS = {
    "PP": "prepositional phrase", "WHPP": "prepositional phrase", "ADJP": "adjective phrase",
    "WHADJP": "adjective phrase", "ADVP": "adverb phrase", "WHADVP": "adverb phrase",
    "QP": "quantity", "UCP": "unlike coordination", "RRC": "reduced relative clause",
    "FRAG": "fragment", "PRN": "parenthetical", "SINV": "inverted clause", "SQ": "question",
    "SBARQ": "question", "INTJ": "interjection", "PRT": "particle",
}  # fmt: skip
NOUN_PHRASES = {"NP", "NX", "NAC", "WHNP"}
CLAUSES = {"S", "SBAR", "SINV", "SQ", "SBARQ", "FRAG", "UCP"}


def chain_shape(tree: ParsedTree, indices: tuple[int, ...]) -> str:
    """The shape of a verb chain (`trees.verb_chain`): "past", "modal perfect, negated"."""
    tags = [tree.tags[i] for i in indices]
    words = [tree.words[i].lower() for i in indices]
    if "CC" in tags:
        return "coordinated"
    verbs = [(w, t) for w, t in zip(words, tags, strict=True) if t.startswith(VERB_TAGS)]
    if not verbs:
        return "verb"
    shape = [VERB_FORMS.get(verbs[0][1], verbs[0][1])]
    for (word, _), (_, following) in zip(verbs, verbs[1:], strict=False):
        if word in HAVE and following == "VBN":
            shape.append("perfect")
        elif word in BE and following == "VBG":
            shape.append("progressive")
        elif (word in BE or word in GET) and following == "VBN":
            shape.append("passive")
    negated = any(w in NEGATIONS for w in words)
    return " ".join(shape) + (", negated" if negated else "")


def category(node: Node) -> str:
    """A phrase's category: its form, and the function tags that say what it does.

    A clause that is an adverbial is a "clause" whatever its form: its function tag (TMP,
    PRP, ADV, ...) says more of it than its complementizer does.
    """
    tags = sorted(t for t in node.tags if t in MEANING_TAGS)
    adverbial = node.category in CLAUSES and bool(node.tags & ADVERBIAL_TAGS)
    return ", ".join(["clause" if adverbial else phrase_form(node), *tags])


def phrase_form(node: Node) -> str:
    """What kind of phrase a node is, in the words a grammar uses."""
    if node.preterminal:
        return WORD_FORMS.get(node.category, node.category)
    if node.category in NOUN_PHRASES:
        return "gerund clause" if "NOM" in node.tags else _noun_form(node)
    if node.category == "S":
        return _clause_form(node)
    if node.category == "SBAR":
        return _sbar_form(node)
    if node.category == "VP":
        return _verb_phrase_form(node)
    return PHRASE_FORMS.get(node.category, node.category)


def _visible(node: Node) -> list[Node]:
    return [c for c in node.children if not c.empty and not c.is_word]


def _noun_form(node: Node) -> str:
    head = node
    while True:
        parts = _visible(head)
        if parts and parts[0].category in NOUN_PHRASES and not parts[0].preterminal:
            head = parts[0]
        else:
            break
    tags = [c.category for c in _visible(head) if c.preterminal]
    if tags == ["PRP"]:
        return "pronoun"
    if tags == ["EX"]:
        return "existential there"
    if "QP" in [c.category for c in _visible(head)] or "$" in tags or tags[-1:] == ["CD"]:
        return "quantity"
    nouns = [t for t in tags if t.startswith("NN")]
    if nouns and nouns[-1].startswith("NNP"):
        return "proper noun phrase"
    if tags and tags[0] == "DT" and not nouns:
        return "demonstrative or determiner"
    return "noun phrase"


def _first_verb(node: Node) -> str | None:
    """The tag of the first verb word down a VP's chain (or the clause's VP)."""
    for child in node.children:
        if child.empty or child.is_word:
            continue
        if child.preterminal and child.category.startswith(VERB_TAGS):
            return child.category
        if child.category == "VP":
            return _first_verb(child)
    return None


def _clause_vp(clause: Node) -> Node | None:
    """A clause's VP; of coordinated clauses ("S and S"), the first one's."""
    parts = [c for c in clause.children if not c.empty and not c.is_word]
    vps = [c for c in parts if c.category == "VP"]
    if vps:
        return vps[0]
    clauses = [c for c in parts if c.category == "S"]
    return _clause_vp(clauses[0]) if clauses else None


def _clause_form(node: Node) -> str:
    if "NOM" in node.tags:
        return "gerund clause"
    vp = _clause_vp(node)
    if vp is None:
        return "small clause"
    first = _first_verb(vp)
    if first == "TO":
        return "to-infinitive clause"
    if first == "VBG":
        return "-ing clause"
    if first == "VBN":
        return "participle clause"
    if first == "VB":
        return "bare infinitive clause"
    return "finite clause"


def _sbar_form(node: Node) -> str:
    children = [c for c in node.children if not c.is_word]
    if not children:
        return "clause"
    first = children[0]
    relative = node.parent is not None and node.parent.category in NOUN_PHRASES
    if first.category.startswith("WH"):
        word = _wh_word(first)
        clauses = [c for c in children[1:] if c.category == "S"]
        if word == "zero" and clauses and _first_verb_of_clause(clauses[0]) == "TO":
            return "to-infinitive relative clause"
        return f"relative clause ({word})" if relative else f"wh-clause ({word})"
    if first.category == "-NONE-":
        return "relative clause (zero)" if relative else "that-clause without that"
    if first.category in ("IN", "RB") and first.preterminal:
        word = first.children[0].label.lower()
        if word == "that":
            return "that-clause"
        if word == "whether" or (word == "if" and not node.tags & ADVERBIAL_TAGS):
            return "whether-clause"
        return "subordinate clause"
    return "clause"


def _first_verb_of_clause(clause: Node) -> str | None:
    vp = _clause_vp(clause)
    return _first_verb(vp) if vp is not None else None


def _verb_phrase_form(node: Node) -> str:
    first = _first_verb(node)
    if first == "VBN":
        return "past participle phrase"
    if first == "VBG":
        return "-ing phrase"
    if first == "TO":
        return "to-infinitive phrase"
    return "verb phrase"


def _wh_word(node: Node) -> str:
    """The wh-word of a wh-phrase ("which" of "in which"), "zero" for an empty one."""
    tagged = _tagged_words(node)
    for tag, word in tagged:
        if tag.startswith("W"):
            return word.lower()
    return tagged[0][1].lower() if tagged else "zero"


def _tagged_words(node: Node) -> list[tuple[str, str]]:
    """(tag, word) of the visible words under a node, in order."""
    if node.preterminal:
        return [] if node.empty else [(node.category, node.children[0].label)]
    return [pair for child in node.children if not child.is_word for pair in _tagged_words(child)]
