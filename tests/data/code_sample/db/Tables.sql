SET ANSI_NULLS ON
GO
SET QUOTED_IDENTIFIER ON
GO

-- Customers who place orders.
CREATE TABLE [dbo].[Customers] (
    [CustomerId] INT IDENTITY(1,1) NOT NULL PRIMARY KEY,
    [Name] NVARCHAR(200) NOT NULL,
    [Email] NVARCHAR(320) NULL
)
GO

CREATE TABLE [dbo].[Orders] (
    [OrderId] INT IDENTITY(1,1) NOT NULL PRIMARY KEY,
    [CustomerId] INT NOT NULL,
    [Status] NVARCHAR(20) NOT NULL DEFAULT 'New',
    [Total] DECIMAL(18, 2) NOT NULL,
    CONSTRAINT [FK_Orders_Customers] FOREIGN KEY ([CustomerId]) REFERENCES [dbo].[Customers] ([CustomerId])
)
GO

CREATE TABLE dbo.Payments (
    PaymentId INT IDENTITY(1,1) NOT NULL PRIMARY KEY,
    OrderId INT NOT NULL REFERENCES dbo.Orders (OrderId),
    Amount DECIMAL(18, 2) NOT NULL,
    Status INT NOT NULL,
    CreatedAt DATETIME2 NOT NULL DEFAULT SYSUTCDATETIME()
);
CREATE TABLE dbo.ShippingRates (
    Carrier NVARCHAR(50) NOT NULL,
    MaxWeightKg DECIMAL(9, 3) NOT NULL,
    Price DECIMAL(18, 2) NOT NULL
);
GO

CREATE NONCLUSTERED INDEX [IX_Payments_OrderId] ON [dbo].[Payments] ([OrderId])
GO
