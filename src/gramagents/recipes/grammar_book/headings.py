"""Which headings of a grammar book name its grammar: word lists in several languages.

The paper reads the sections of the book on syntax and morphology (§3.2). A heading is read
against the lists of the book's language and of English, French and German (grammar books are
often written in one of them): a *drop* term (pronunciation, vocabulary, exercises,
conversation, ...) or a *grammar* term (grammar, syntax, verbs, plural, word order, ...)
decides; an *ambiguous* term (agreement, questions, case, sentence, ...) names grammar only
under a grammar heading, since "Agreement" or "Questions" may as well head conversation
practice. The section's own heading is read first, then the headings above it, nearest
first; the first heading with a drop or grammar term decides. The book's title (a heading
above every section) decides nothing: the title of a grammar book names grammar.

German and Luxembourgish terms also match as the first or last part of a compound
(`Modalverben`, `Pluralbildung`); English and French ones as whole words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

Kind = Literal["grammar", "ambiguous", "drop"]

_EN = {
    "grammar": (
        "grammar, syntax, morphology, morphosyntax, word order, word formation, sentence "
        "structure, clause, clauses, noun, nouns, verb, verbs, adjective, adjectives, adverb, "
        "adverbs, article, articles, determiner, determiners, pronoun, pronouns, preposition, "
        "prepositions, postposition, postpositions, conjunction, conjunctions, particle, "
        "particles, numeral, numerals, plural, plurals, gender, inflection, declension, "
        "conjugation, negation, tense, tenses, passive, subjunctive, imperative, infinitive, "
        "participle, participles, subordinate, subordination, coordination, comparative, "
        "superlative, possessive, possessives, auxiliary, auxiliaries, modal verbs, word "
        "classes, parts of speech"
    ),
    "ambiguous": (
        "agreement, question, questions, case, cases, mood, moods, sentence, sentences, order, "
        "number, person, aspect, voice, comparison"
    ),
    "drop": (
        "phonology, phonetics, pronunciation, sounds, orthography, spelling, alphabet, lexicon, "
        "vocabulary, glossary, word list, dictionary, preface, foreword, "
        "acknowledgements, acknowledgments, bibliography, references, index, contents, "
        "abbreviations, exercise, exercises, answers, answer key, conversation, conversations, "
        "dialogue, dialogues, dialog, role play, small talk, useful phrases, phrasebook, "
        "greetings, culture, reading, listening, agreeing, disagreeing, practice"
    ),
}
_FR = {
    "grammar": (
        "grammaire, syntaxe, morphologie, ordre des mots, formation des mots, nom, noms, "
        "substantif, substantifs, verbe, verbes, adjectif, adjectifs, adverbe, adverbes, "
        "article, articles, déterminant, déterminants, pronom, pronoms, préposition, "
        "prépositions, conjonction, conjonctions, pluriel, genre, conjugaison, déclinaison, "
        "négation, subjonctif, impératif, infinitif, participe, participes, subordonnée, "
        "subordonnées, comparatif, superlatif, possessif, possessifs, auxiliaire, auxiliaires, "
        "passif, temps verbaux"
    ),
    "ambiguous": (
        "accord, accords, question, questions, cas, mode, modes, phrase, phrases, temps, "
        "ordre, nombre, personne, proposition, propositions"
    ),
    "drop": (
        "phonologie, phonétique, prononciation, orthographe, alphabet, lexique, vocabulaire, "
        "glossaire, dictionnaire, préface, avant-propos, remerciements, bibliographie, "
        "références, index, table des matières, sommaire, abréviations, exercice, exercices, "
        "corrigés, conversation, conversations, dialogue, dialogues, jeu de rôle, expressions "
        "utiles, salutations, culture, lecture, écoute"
    ),
}
_DE = {
    "grammar": (
        "grammatik, syntax, morphologie, wortstellung, satzstellung, satzbau, wortbildung, "
        "nomen, substantiv, substantive, verb, verben, adjektiv, adjektive, adverb, adverbien, "
        "artikel, pronomen, präposition, präpositionen, konjunktion, konjunktionen, partikel, "
        "partikeln, plural, mehrzahl, genus, kasus, deklination, konjugation, negation, "
        "verneinung, nebensatz, nebensätze, hauptsatz, hauptsätze, relativsatz, relativsätze, "
        "konjunktiv, imperativ, infinitiv, partizip, passiv, perfekt, präteritum, präsens, "
        "futur, komparativ, superlativ, steigerung, kongruenz, tempus, zeitformen, wortarten"
    ),
    "ambiguous": "frage, fragen, fall, fälle, satz, sätze, zeit, zeiten, modus, person, zahl",
    "drop": (
        "phonologie, phonetik, aussprache, lautlehre, rechtschreibung, orthographie, "
        "orthografie, alphabet, wortschatz, vokabular, vokabeln, glossar, wörterbuch, "
        "wörterverzeichnis, vorwort, danksagung, literaturverzeichnis, "
        "bibliographie, register, index, inhaltsverzeichnis, abkürzungen, übung, übungen, "
        "lösungen, gespräch, gespräche, konversation, dialog, dialoge, rollenspiel, "
        "redemittel, landeskunde, kultur"
    ),
}
_LB = {
    "grammar": (
        "grammatik, syntax, morphologie, wuertuerdnung, wuertstellung, sazbau, nomen, "
        "substantiv, substantiver, verb, verben, adjektiv, adjektiver, adverb, adverbien, "
        "artikel, pronomen, prepositioun, prepositiounen, präpositioun, präpositiounen, "
        "konjunktioun, konjunktiounen, pluriel, plural, mierzuel, geschlecht, genus, kasus, "
        "deklinatioun, konjugatioun, negatioun, verneinung, niewesaz, niewesätz, haaptsaz, "
        "haaptsätz, relativsaz, relativsätz, imperativ, infinitiv, partizip, passiv, perfekt, "
        "komparativ, superlativ, zäitformen, wuertaarten"
    ),
    "ambiguous": "fro, froen, fall, fäll, saz, sätz, zäit, zäiten, persoun",
    "drop": (
        "aussprooch, schreifweis, orthographie, alphabet, wuertschatz, vokabulär, wierderbuch, "
        "virwuert, bibliographie, index, inhalt, ofkierzungen, übungen, iwwungen, "
        "léisungen, gespréich, gespréicher, konversatioun, dialog, dialoger, kultur"
    ),
}
LISTS: dict[str, dict[str, str]] = {"en": _EN, "fr": _FR, "de": _DE, "lb": _LB}
"""Term lists by language code (ISO 639-1); `lb` is Luxembourgish, the paper's language."""
COMPOUNDING = {"de", "lb"}
"""Languages whose terms also match as the first or last part of a compound word."""
ALIASES = {"ltz": "lb", "eng": "en", "fra": "fr", "fre": "fr", "deu": "de", "ger": "de"}


def terms(kind: Kind, languages: list[str]) -> dict[str, list[str]]:
    """The terms of one kind per language (languages without lists are skipped)."""
    found: dict[str, list[str]] = {}
    for code in languages:
        code = ALIASES.get(code.split("_")[0].lower(), code.split("_")[0].lower())
        if code in LISTS and code not in found:
            found[code] = [t.strip() for t in LISTS[code][kind].split(",") if t.strip()]
    return found


@lru_cache(maxsize=64)
def _pattern(words: tuple[str, ...], compounds: bool) -> re.Pattern[str] | None:
    if not words:
        return None
    body = "|".join(re.escape(w.casefold()) for w in sorted(words, key=len, reverse=True))
    if compounds:
        return re.compile(rf"(?<!\w)(?:\w*(?:{body})|(?:{body})\w*)(?!\w)")
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)")


@dataclass(frozen=True)
class Vocabulary:
    """The terms a book's headings are read against, by kind."""

    patterns: dict[Kind, list[re.Pattern[str]]]

    @classmethod
    def of(cls, languages: list[str], extra: dict[Kind, list[str]] | None = None) -> Vocabulary:
        """The lists of `languages`, with the recipe's `extra` terms (matched as whole words)."""
        patterns: dict[Kind, list[re.Pattern[str]]] = {}
        for kind in ("grammar", "ambiguous", "drop"):
            found = []
            for code, words in terms(kind, languages).items():  # type: ignore[arg-type]
                short = tuple(w for w in words if code not in COMPOUNDING or len(w) < 4)
                long = tuple(w for w in words if code in COMPOUNDING and len(w) >= 4)
                found += [p for p in (_pattern(short, False), _pattern(long, True)) if p]
            more = tuple((extra or {}).get(kind, []))  # type: ignore[call-overload]
            found += [p for p in (_pattern(more, False),) if p]
            patterns[kind] = found  # type: ignore[index]
        return cls(patterns)

    def find(self, kind: Kind, heading: str) -> str | None:
        """The first term of `kind` the heading names, as it is written there."""
        text = heading.casefold()
        for pattern in self.patterns[kind]:
            match = pattern.search(text)
            if match is not None:
                return match.group(0)
        return None


@dataclass(frozen=True)
class HeadingVerdict:
    """What the word lists say of a section, and why."""

    decision: Literal["keep", "drop", "undecided"]
    reason: str


def _where(own: str, heading: str, term: str) -> str:
    if heading == own:
        return f"heading '{own}' names '{term}'"
    return f"heading '{own}' is under '{heading}', which names '{term}'"


def heading_verdict(path: list[str], vocabulary: Vocabulary) -> HeadingVerdict:
    """Read a section's headings (its own first, then those above it) against the lists."""
    own = path[-1]
    ambiguous: tuple[str, str] | None = None
    for heading in reversed(path):
        dropped = vocabulary.find("drop", heading)
        if dropped is not None:
            return HeadingVerdict("drop", _where(own, heading, dropped))
        grammar = vocabulary.find("grammar", heading)
        if grammar is not None:
            if ambiguous is not None:
                return HeadingVerdict(
                    "keep",
                    f"'{ambiguous[1]}' in '{ambiguous[0]}' is under the grammar heading "
                    f"'{heading}' ('{grammar}')",
                )
            return HeadingVerdict("keep", _where(own, heading, grammar))
        if ambiguous is None and (word := vocabulary.find("ambiguous", heading)) is not None:
            ambiguous = (heading, word)
    if ambiguous is not None:
        return HeadingVerdict(
            "undecided",
            f"'{ambiguous[1]}' in '{ambiguous[0]}' may or may not be grammar, and no heading "
            "above it names grammar",
        )
    return HeadingVerdict("undecided", "no heading names a grammar topic or a dropped one")
