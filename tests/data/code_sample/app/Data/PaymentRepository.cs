using System.Data;
using System.Data.SqlClient;
using Contoso.Payments.Models;

namespace Contoso.Payments.Data
{
    /// <summary>ADO.NET repository: every call goes through a stored procedure.</summary>
    public class PaymentRepository : IPaymentRepository
    {
        private readonly string _connectionString;

        public PaymentRepository(string connectionString)
        {
            _connectionString = connectionString;
        }

        public Payment GetPayment(int paymentId)
        {
            using var conn = new SqlConnection(_connectionString);
            using var cmd = new SqlCommand("dbo.proc_GetPayment", conn);
            cmd.CommandType = CommandType.StoredProcedure;
            cmd.Parameters.AddWithValue("@PaymentId", paymentId);
            conn.Open();
            using var reader = cmd.ExecuteReader();
            return reader.Read() ? Map(reader) : null;
        }

        public void ProcessPayment(Payment payment)
        {
            using var conn = new SqlConnection(_connectionString);
            var cmd = new SqlCommand("[dbo].[proc_ProcessPayment]", conn)
            {
                CommandType = CommandType.StoredProcedure
            };
            cmd.Parameters.AddWithValue("@OrderId", payment.OrderId);
            cmd.Parameters.AddWithValue("@Amount", payment.Amount);
            conn.Open();
            cmd.ExecuteNonQuery();
        }

        public void RefundPayment(int paymentId, string reason)
        {
            using var conn = new SqlConnection(_connectionString);
            using var cmd = conn.CreateCommand();
            cmd.CommandText = "EXEC dbo.proc_RefundPayment @PaymentId, @Reason";
            cmd.Parameters.AddWithValue("@PaymentId", paymentId);
            cmd.Parameters.AddWithValue("@Reason", reason);
            conn.Open();
            cmd.ExecuteNonQuery();
        }

        private static Payment Map(SqlDataReader reader)
        {
            return new Payment
            {
                PaymentId = reader.GetInt32(0),
                OrderId = reader.GetInt32(1),
                Amount = reader.GetDecimal(2),
                Status = (PaymentStatus)reader.GetInt32(3),
            };
        }
    }
}
