//! Ghost text that recalls the writer's own words, over the real default model: a name or a
//! phrase the document used before is offered when its first letters are typed, and never
//! outside prose.

use std::sync::Mutex;

use laya_decide::{ghost, GhostOptions, Lexicon, Recall, RecallOptions, Recalls, Speller, Vocab};
use laya_model::{KvCache, Model};

mod common;
use common::{default_lexicon_path, default_model_path};

static MLX: Mutex<()> = Mutex::new(());

/// Ghost text after `before`, with the writer's words counted from `earlier` (text before the
/// model's window, as in the language server) and `before` up to the word being typed (as
/// `laya eval next-word` and the language server count them), or with none.
fn ghost_after(model: &Model, vocab: &Vocab, earlier: &str, before: &str, recall: bool) -> Option<String> {
    let speller = Speller::new(Lexicon::load(&default_lexicon_path()).expect("the lexicon loads: run `make lexicon`"));
    let context = laya_text::split_at_cursor(before).context;
    let mut document = Recall::new();
    document.add_prose(earlier);
    document.add_prose(context);
    let workspace = Recall::new();
    let recalls = Recalls { document: &document, workspace: &workspace };
    let opts = GhostOptions { recall: recall.then(RecallOptions::default), ..GhostOptions::default() };
    ghost(model, vocab, Some(&speller), Some(&recalls), &mut KvCache::new(), before, "", &opts).unwrap().map(|g| g.insert)
}

#[test]
fn a_made_up_name_used_before_is_offered_from_its_first_letters() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = Model::load(&default_model_path()).expect("the default model loads");
    let vocab = Vocab::new(&model).unwrap();
    // Pages earlier, out of the model's window of the text before the cursor.
    let earlier = "The report was written by Quorvath Delling in spring. Later that year Quorvath moved to \
                   the coast.\n\n";
    let text = "In June we called Qu";
    assert_eq!(ghost_after(&model, &vocab, earlier, text, true).as_deref(), Some("orvath"));
    // The model alone does not know it: the name is the writer's, not the model's.
    assert_ne!(ghost_after(&model, &vocab, earlier, text, false).as_deref(), Some("orvath"));
}

#[test]
fn a_phrase_the_writer_wrote_is_extended() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = Model::load(&default_model_path()).expect("the default model loads");
    let vocab = Vocab::new(&model).unwrap();
    let text = "We trained it with the Adam optimizer with warm restarts first. Later the Adam optimizer \
                with warm restarts was dropped, and then we tried the Adam opt";
    let g = ghost_after(&model, &vocab, "", text, true).expect("a suggestion");
    assert!(g.starts_with("imizer with warm"), "{g:?}");
    // The model alone stops at the word.
    assert_eq!(ghost_after(&model, &vocab, "", text, false).as_deref(), Some("imizer"));
}

#[test]
fn nothing_is_recalled_outside_prose() {
    let _mlx = MLX.lock().unwrap_or_else(|e| e.into_inner());
    let model = Model::load(&default_model_path()).expect("the default model loads");
    let vocab = Vocab::new(&model).unwrap();
    let prose = "Quorvath wrote it. Then Quorvath left, and Quorvath came back.";
    for before in [format!("{prose}\n\n```\nlet q = Quo"), format!("{prose} See `Quo"), format!("{prose} See https://Quo")] {
        assert_eq!(ghost_after(&model, &vocab, "", &before, true), None, "{before:?}");
    }
}
