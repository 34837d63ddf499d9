using Contoso.Payments.Models;

namespace Contoso.Payments.Data
{
    /// <summary>Reads and writes payments in the Payments database.</summary>
    public interface IPaymentRepository
    {
        Payment GetPayment(int paymentId);
        void ProcessPayment(Payment payment);
        void RefundPayment(int paymentId, string reason);
    }
}
