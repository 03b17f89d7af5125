from evals.hygiene.suite import hygiene

hygiene()
