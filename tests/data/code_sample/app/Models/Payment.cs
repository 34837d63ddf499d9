using System;

namespace Contoso.Payments.Models;

/// <summary>A payment taken for one order.</summary>
public class Payment
{
    public int PaymentId { get; set; }
    public int OrderId { get; set; }
    public decimal Amount { get; set; }
    public PaymentStatus Status { get; set; }
    public DateTime CreatedAt { get; set; }

    /// <summary>True when the payment can still be refunded (paid within 30 days).</summary>
    public bool IsRefundable(DateTime now)
    {
        return Status == PaymentStatus.Paid && (now - CreatedAt).TotalDays <= 30;
    }
}

public enum PaymentStatus
{
    Pending,
    Paid,
    Refunded,
    Failed
}

public record ShipmentQuote(string Carrier, decimal Price);
