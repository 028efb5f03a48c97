"""The word-level tokenizer and the vocabulary it must cover."""

import pytest

from methods.vlm.tokenizer import BOS, EOS, PAD, UNK, WordTokenizer, words


def test_words_split_punctuation_and_underscores():
    assert words("A photo of a Golf_Ball.") == ["a", "photo", "of", "a", "golf", "ball", "."]


def test_encode_pad_and_unknown():
    tok = WordTokenizer.build(["a photo of a tomato.", "a brick"], context_length=8)
    ids = tok(["a tomato.", "a zebra"])
    assert ids.shape == (2, 5)
    assert ids[0].tolist() == [BOS, tok.index["a"], tok.index["tomato"], tok.index["."], EOS]
    assert ids[1].tolist() == [BOS, tok.index["a"], UNK, EOS, PAD]
    assert tok.decode(ids[0].tolist()) == "a tomato ."
    assert tok.covers("a photo of a brick") and not tok.covers("a zebra")


def test_truncation_keeps_end_of_text():
    tok = WordTokenizer.build(["a b c d e f g h"], context_length=5)
    row = tok(["a b c d e f g h"])[0].tolist()
    assert len(row) == 5 and row[0] == BOS and row[-1] == EOS


def test_save_load_roundtrip(tmp_path):
    tok = WordTokenizer.build(["one two three"], context_length=6)
    tok.save(tmp_path / "v.json")
    again = WordTokenizer.load(tmp_path / "v.json")
    assert again.vocab == tok.vocab and again.context_length == 6


def test_bad_vocabularies_are_refused():
    with pytest.raises(ValueError):
        WordTokenizer(["a", "b"])
    with pytest.raises(ValueError):
        WordTokenizer(["<pad>", "<unk>", "<bos>", "<eos>", "a", "a"])


def test_vocabulary_covers_captions_classes_and_wordnet(data_dir):
    from methods.vlm.data import OBJECTS20, vocabulary_texts, wordnet_lemmas
    from methods.vlm.render import LEXICON

    tok = WordTokenizer.build(vocabulary_texts(wordnet=True))
    nouns = wordnet_lemmas(("noun",))
    assert len(nouns) == 58546
    assert all(tok.covers(w) for w in nouns[::97])
    assert all(tok.covers(n) for n in (*LEXICON, *OBJECTS20, "hydraulic pump", "a centered satellite photo of"))
