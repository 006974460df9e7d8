CREATE TABLE a (x int)
CREATE TABLE b (y int broken (
/* unterminated