; CodeQL (QL) definitions and references (capture conventions: see ecma-tags.scm).

(module name: (moduleName) @name) @definition.module
(dataclass name: (className) @name) @definition.class
(datatype name: (className) @name) @definition.type
(datatypeBranch name: (className) @name) @definition.class
(charpred (className) @name) @definition.method
(memberPredicate name: (predicateName) @name) @definition.method
(classlessPredicate name: (predicateName) @name) @definition.function
(field (varDecl (varName (simpleId) @name))) @definition.field

(qualifiedRhs name: (predicateName) @reference.call)
(aritylessPredicateExpr name: (literalId) @reference.call)
(typeExpr name: (className) @reference.type)
