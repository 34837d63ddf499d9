/* Orders with their payments and the customer's name, for the payments API. */
CREATE VIEW [dbo].[vw_OrderPayments]
AS
SELECT o.OrderId, o.Status AS OrderStatus, c.Name AS CustomerName,
       p.PaymentId, p.Amount, p.Status AS PaymentStatus, p.CreatedAt
FROM dbo.Orders AS o
INNER JOIN dbo.Payments AS p ON p.OrderId = o.OrderId
LEFT JOIN [dbo].[Customers] c ON c.CustomerId = o.CustomerId
GO
