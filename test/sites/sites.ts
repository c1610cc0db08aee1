/** Two real-looking sites the location tests share: a customer given by address, a depot surveyed by coordinate. */
export const CUSTOMER = {
  name: 'Customer Utrecht',
  type: 'customer',
  geoReference: {
    type: 'addressGeoReference',
    street: 'Oudegracht',
    houseNumber: '100',
    postalCode: '3511AX',
    city: 'Utrecht',
    country: 'NL',
  },
};

/** Without an id: tests that need one add it. */
export const DEPOT = {
  name: 'Depot Amersfoort',
  type: 'warehouse',
  geoReference: { type: 'latLonPointGeoReference', lat: 52.1956251, lon: 5.4126792 },
  administrativeReference: {
    name: 'Depot Amersfoort',
    street: 'Valutaboulevard',
    houseNumber: '16',
    postalCode: '1825BT',
    city: 'Amersfoort',
    country: 'NL',
  },
};
