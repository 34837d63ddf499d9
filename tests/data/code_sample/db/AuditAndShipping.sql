CREATE TABLE dbo.AuditLog (
    AuditId BIGINT IDENTITY(1,1) PRIMARY KEY,
    Action NVARCHAR(20) NOT NULL,
    OrderId INT NULL REFERENCES dbo.Orders (OrderId),
    At DATETIME2 NOT NULL DEFAULT SYSUTCDATETIME()
)
GO

CREATE PROCEDURE dbo.proc_WriteAudit
    @Action NVARCHAR(20),
    @OrderId INT
AS
BEGIN
    INSERT INTO dbo.AuditLog (Action, OrderId) VALUES (@Action, @OrderId);
END
GO

CREATE FUNCTION dbo.fn_ShippingRate (@Carrier NVARCHAR(50), @WeightKg DECIMAL(9, 3))
RETURNS TABLE
AS
RETURN (
    SELECT TOP 1 Price FROM dbo.ShippingRates
    WHERE Carrier = @Carrier AND MaxWeightKg >= @WeightKg
    ORDER BY MaxWeightKg
)
GO

CREATE PROCEDURE dbo.proc_GetShippingRate
    @Carrier NVARCHAR(50),
    @WeightKg DECIMAL(9, 3)
AS
BEGIN
    SELECT Price FROM dbo.fn_ShippingRate(@Carrier, @WeightKg);
END
GO

CREATE TRIGGER dbo.trg_Payments_Audit ON dbo.Payments
AFTER INSERT
AS
BEGIN
    INSERT INTO dbo.AuditLog (Action, OrderId)
    SELECT 'PAYMENT', i.OrderId FROM inserted AS i;
END
GO
