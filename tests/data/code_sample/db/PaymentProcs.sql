CREATE OR ALTER PROCEDURE [dbo].[proc_ProcessPayment]
    @OrderId INT,
    @Amount DECIMAL(18, 2)
AS
BEGIN
    SET NOCOUNT ON;

    CREATE TABLE #OpenOrders (OrderId INT PRIMARY KEY);

    INSERT INTO #OpenOrders (OrderId)
    SELECT OrderId FROM dbo.Orders WHERE OrderId = @OrderId AND Status = 'New';

    WITH PaidSoFar AS (
        SELECT OrderId, SUM(Amount) AS Paid FROM dbo.Payments WHERE OrderId = @OrderId GROUP BY OrderId
    )
    SELECT oo.OrderId FROM #OpenOrders oo LEFT JOIN PaidSoFar ps ON ps.OrderId = oo.OrderId;

    INSERT INTO dbo.Payments (OrderId, Amount, Status)
    VALUES (@OrderId, @Amount, 1);

    UPDATE o SET o.Status = 'Paid'
    FROM dbo.Orders AS o
    INNER JOIN #OpenOrders AS oo ON oo.OrderId = o.OrderId;

    EXEC dbo.proc_WriteAudit @Action = 'PAY', @OrderId = @OrderId;
END
GO

CREATE PROCEDURE dbo.proc_GetPayment
    @PaymentId INT
AS
    SELECT PaymentId, OrderId, Amount, PaymentStatus
    FROM dbo.vw_OrderPayments
    WHERE PaymentId = @PaymentId;
GO

-- Written without semicolons, as much T-SQL is.
CREATE PROCEDURE [dbo].[proc_RefundPayment]
    @PaymentId INT,
    @Reason NVARCHAR(200)
AS
BEGIN
    SET NOCOUNT ON
    DECLARE @Touched TABLE (PaymentId INT)

    UPDATE dbo.Payments SET Status = 2
    OUTPUT inserted.PaymentId INTO @Touched
    WHERE PaymentId = @PaymentId

    INSERT INTO dbo.Refunds (PaymentId, Reason)
    SELECT PaymentId, @Reason FROM @Touched

    EXECUTE [dbo].[proc_WriteAudit] @Action = 'REFUND', @OrderId = NULL
END
GO
