"""Reading comprehension: span-extraction models (BiDAF, QANet, DialogQA, transformer QA) and NAQANet's numerical
answers for DROP, the SQuAD, QuAC and DROP readers, and SQuAD's and DROP's EM/F1."""
