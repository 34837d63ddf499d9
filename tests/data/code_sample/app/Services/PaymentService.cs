using System;
using Contoso.Payments.Data;
using Contoso.Payments.Models;

namespace Contoso.Payments.Services;

/// <summary>Takes payments and refunds them; shipping is quoted before charging.</summary>
public class PaymentService
{
    private readonly IPaymentRepository _repository;
    private readonly ShippingCalculator _shipping;

    public PaymentService(IPaymentRepository repository, ShippingCalculator shipping)
    {
        _repository = repository;
        _shipping = shipping;
    }

    public Payment Pay(int orderId, decimal amount, decimal weightKg)
    {
        ShipmentQuote quote = _shipping.Quote(weightKg);
        var payment = new Payment { OrderId = orderId, Amount = amount + quote.Price };
        _repository.ProcessPayment(payment);
        return payment;
    }

    /// <summary>Refund by id: loads the payment first.</summary>
    public void Refund(int paymentId)
    {
        Refund(_repository.GetPayment(paymentId));
    }

    /// <summary>Refund a loaded payment, if it is still refundable.</summary>
    public void Refund(Payment payment)
    {
        if (!payment.IsRefundable(DateTime.UtcNow))
        {
            throw new InvalidOperationException("payment can no longer be refunded");
        }
        _repository.RefundPayment(payment.PaymentId, "customer request");
    }
}
