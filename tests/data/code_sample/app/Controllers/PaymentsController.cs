using Microsoft.AspNetCore.Mvc;
using Contoso.Payments.Models;
using Contoso.Payments.Services;

namespace Contoso.Payments.Controllers
{
    [ApiController]
    [Route("api/payments")]
    public class PaymentsController : ControllerBase
    {
        private readonly PaymentService _service;

        public PaymentsController(PaymentService service)
        {
            _service = service;
        }

        [HttpPost]
        public IActionResult Pay([FromBody] PayRequest request)
        {
            Payment payment = _service.Pay(request.OrderId, request.Amount, request.WeightKg);
            return Ok(payment);
        }

        [HttpPost("{paymentId}/refund")]
        public IActionResult Refund(int paymentId)
        {
            _service.Refund(paymentId);
            return NoContent();
        }

        /// <summary>Body of POST api/payments.</summary>
        public class PayRequest
        {
            public int OrderId { get; set; }
            public decimal Amount { get; set; }
            public decimal WeightKg { get; set; }
        }
    }
}
