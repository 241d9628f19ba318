"""Reading comprehension: span-extraction models (BiDAF, QANet, DialogQA, transformer QA), the SQuAD and QuAC readers
and SQuAD's EM/F1."""
