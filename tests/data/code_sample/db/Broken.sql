CREATE PROCEDURE dbo.proc_Unfinished
    @Id INT
AS
BEGIN
    SELECT Id, Name FROM dbo.Things WHERE Id = (@Id
END
GO
