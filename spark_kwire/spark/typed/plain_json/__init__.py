"""Plain JSON values with no schema given: sampled and inferred at load(), recorded and widened by streams
(``schemaLocation``, ``schemaEvolutionMode``)."""
