CREATE TABLE a (id INTEGER PRIMARY KEY, name varchar(20) NOT NULL);
CREATE TABLE b (id int, a_id int REFERENCES a(id), PRIMARY KEY (id));
