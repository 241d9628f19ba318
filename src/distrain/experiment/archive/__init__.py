"""The archive family: a trained run's ``model.tar.gz`` written and read (:mod:`.format`), AllenNLP's archives
translated (:mod:`.allennlp`), the pretrained files an archive carries (:mod:`.pretrained_files`), the jobs that
load one to evaluate or predict (:mod:`.jobs`) and its export to other formats (:mod:`.export`)."""
