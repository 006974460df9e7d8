-- acme style
CREATE TABLE Claim (Claim_Identifier INTEGER NOT NULL, PRIMARY KEY (Claim_Identifier))
CREATE TABLE Loss (Loss_Id INTEGER, Claim_Identifier INTEGER, FOREIGN KEY (Claim_Identifier) REFERENCES Claim (Claim_Identifier))
